"""The recipe's JSON Schema, as committed in recipes/recipe.schema.json."""

from __future__ import annotations

import json
from typing import Any

from autotune.recipe.model import Recipe


def recipe_schema() -> dict[str, Any]:
    schema = Recipe.model_json_schema(by_alias=True, mode="validation")
    schema["$id"] = "https://autotune.invalid/recipe.schema.json"
    schema["title"] = "autotune recipe"
    return schema


def schema_text() -> str:
    return json.dumps(recipe_schema(), indent=2) + "\n"


if __name__ == "__main__":  # python -m autotune.recipe.schema > recipes/recipe.schema.json
    print(schema_text(), end="")
