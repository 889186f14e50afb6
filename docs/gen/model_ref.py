"""Reference tables generated from pydantic models: the recipe (from its JSON Schema, as committed
in recipes/recipe.schema.json) and autotune.DataLoader's online options (from OnlineOptions)."""

from __future__ import annotations

import json
from typing import Any

from comments import field_comments
from pydantic import BaseModel

from autotune.online.options import ENV_VAR, OnlineOptions
from autotune.recipe import model as recipe_model
from autotune.recipe.schema import recipe_schema


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(prop: dict[str, Any]) -> str:
    """A JSON Schema property's type in a few words; a $ref links to its model's section."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        kinds = [_type(p) for p in prop["anyOf"]]
        return " or ".join(k for k in kinds if k != "null") + (
            " or null" if "null" in kinds else ""
        )
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"object of {_type(prop['additionalProperties'])}"
    return str(kind)


def _limits(prop: dict[str, Any]) -> str:
    found = {**prop, **next((p for p in prop.get("anyOf", []) if p.get("type") != "null"), {})}
    words = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}
    return ", ".join(f"{sign} {found[k]}" for k, sign in words.items() if k in found)


def _default(prop: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    return f"`{json.dumps(prop['default'])}`" if "default" in prop else ""


def schema_table(schema: dict[str, Any], notes: dict[str, str]) -> list[str]:
    lines = ["| field | type | default | limits | what it holds |", "|---|---|---|---|---|"]
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        text = prop.get("description") or notes.get(name, "")
        lines.append(
            f"| `{name}` | {_type(prop)} | {_default(prop, name in required)} |"
            f" {_limits(prop)} | {_cell(text)} |"
        )
    return lines


# The recipe's top-level blocks, which the model leaves undocumented field by field.
_RECIPE_BLOCKS = {
    "autotune_recipe": "the recipe format's version",
    "dataloader": "torch.utils.data.DataLoader arguments, under torch's names",
    "transfer": "device-side knobs, applied by recipe.wrap(loader, device)",
    "measured": "what the tuning machine measured (null: not measurable there)",
    "workload": (
        "what was tuned: name, batch size, the spec and options `autotune verify` rebuilds it from"
    ),
    "environment": (
        "where it was measured: CPUs and their source, GPU, versions, node, Slurm job, ranks"
    ),
    "diagnosis": "the tuned configuration's bottleneck, its evidence and recommendations",
    "created": "when the recipe was written (UTC)",
}


def _model_notes(name: str) -> dict[str, str]:
    if name == "Recipe":
        return _RECIPE_BLOCKS
    cls = getattr(recipe_model, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return {}
    try:
        return field_comments(cls)
    except (OSError, TypeError):  # made at run time (DataLoaderArgs, from the knob registry)
        return {}


def recipe_page() -> str:
    schema = recipe_schema()
    lines = [
        "# Recipe",
        "",
        "Generated from the recipe's JSON Schema (`autotune/recipe/schema.py`; committed as"
        " `recipes/recipe.schema.json`"
        " by `python -m autotune.recipe.schema`) each time the docs are built. Descriptions"
        " come from the schema, else from the comment beside the field in"
        " `autotune/recipe/model.py`.",
        "",
        "`dataloader` holds only arguments valid for its `num_workers`, under torch's own names,"
        ' so `DataLoader(dataset, batch_size=b, **recipe["dataloader"])` works on the raw JSON.'
        " `measured` holds what the tuning machine measured; what it cannot measure is `null`.",
        "",
        "## Recipe",
        "",
        (schema.get("description") or "").strip(),
        "",
        *schema_table(schema, _model_notes("Recipe")),
        "",
    ]
    for name, sub in schema.get("$defs", {}).items():
        lines += [f"## {name}", "", _cell(sub.get("description", "")), ""]
        if "properties" in sub:
            lines += [*schema_table(sub, _model_notes(name)), ""]
        elif "enum" in sub:
            lines += [f"One of {_type(sub)}.", ""]
    return "\n".join(lines)


def online_options_page() -> str:
    schema = OnlineOptions.model_json_schema()
    lines = [
        "# Online options",
        "",
        "The options of `autotune.DataLoader`, generated from `OnlineOptions`"
        " (`autotune/online/options.py`) each time the docs are built. They are read from"
        " `autotune.DataLoader(..., online={...})` (or an `OnlineOptions`), over the JSON object"
        f" in the `{ENV_VAR}` environment variable (what `autotune run` sets), over these"
        " defaults. An unknown option or a value out of its limits is a one-line error.",
        "",
        *schema_table(schema, field_comments(OnlineOptions)),
        "",
    ]
    return "\n".join(lines)


def field_names() -> dict[str, list[str]]:
    """Every field of the recipe (by model) and of the online options: what the pages must hold."""
    schema = recipe_schema()
    models = {"Recipe": schema, **schema.get("$defs", {})}
    names = {m: list(s.get("properties", {})) for m, s in models.items()}
    return {**names, "OnlineOptions": list(OnlineOptions.model_fields)}
