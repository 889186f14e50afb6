"""What comes out: the JSON recipe, its schema, and the API to apply it."""

from autotune.recipe.model import Recipe, load_recipe

__all__ = ["Recipe", "load_recipe"]
