"""What comes out: the JSON recipe, its schema, and the API to apply it."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.recipe.model import Recipe, load_recipe

__getattr__ = exports(
    __name__,
    {
        "Recipe": "autotune.recipe.model",
        "load_recipe": "autotune.recipe.model",
    },
)
__all__ = ["Recipe", "load_recipe"]
