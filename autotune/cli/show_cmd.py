"""`autotune show RECIPE`: print a recipe and how to use it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from autotune.cli.common import DEBUG_OPTION, console, one_line_errors, print_diagnosis
from autotune.recipe.model import Recipe, load_recipe
from autotune.report.table import _cell


def _made_by(recipe: Recipe) -> dict[str, object]:
    if recipe.made_by is None:
        return {"autotune": "not recorded (an older recipe)"}
    return {
        "autotune": recipe.made_by.version,
        "commit": recipe.made_by.commit or "none (an installed package)",
    }


@one_line_errors
def show(
    recipe_path: Path = typer.Argument(..., help="recipe JSON written by `autotune tune`"),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Validate a recipe and show its settings, measurements and the code that applies it."""
    recipe = load_recipe(recipe_path)
    table = Table(title=f"recipe {recipe_path}", show_header=False)
    for block, values in (
        ("dataloader", recipe.dataloader_kwargs()),
        ("transfer", recipe.transfer.model_dump()),
        ("measured", recipe.measured.model_dump()),
        ("workload", recipe.workload),
        ("environment", recipe.environment),
        ("made by", _made_by(recipe)),
    ):
        for key, value in values.items():
            table.add_row(block, key, _cell(value))
            block = ""
    console.print(table)
    if recipe.diagnosis is not None:
        console.print()
        print_diagnosis(
            recipe.diagnosis.bottleneck,
            recipe.diagnosis.evidence.get("reason", ""),
            recipe.diagnosis.recommendations,
        )
    console.print(
        "\nApply it:\n"
        "  recipe = autotune.load_recipe(path)\n"
        "  loader = recipe.dataloader(dataset, batch_size)  # a torch DataLoader\n"
        "  for batch in recipe.wrap(loader, 'cuda'): ...     # device-ready batches",
        highlight=False,
    )
