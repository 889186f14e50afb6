"""What `autotune verify` checks: the recipe, where its findings go, and the workload it was tuned
on.

`autotune tune` records the workload spec it was given (and the built-in workload options) in the
recipe's workload block, so that the same workload can be rebuilt later: `"spec": "sim:cpu_ms=4"`,
`"workload_options": {"batch_size": 64}`. A recipe tuned from Python has no spec; pass the workload.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune.errors import RecipeError, WorkloadError
from autotune.recipe.model import Recipe, load_recipe
from autotune.workload.accelerator import with_target_rate
from autotune.workload.base import Workload
from autotune.workload.builtin import BUILTINS
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import DEFAULT_WORKLOAD, load_workload

SPEC_KEY = "spec"
OPTIONS_KEY = "workload_options"
RECIPE_FILE = "recipe.json"
VERIFY_STEM = "verify"


def record_spec(workload: Workload, spec: str | None, options: WorkloadOptions) -> None:
    """Note in the workload's details (the recipe's workload block) how to build it again."""
    workload.details[SPEC_KEY] = spec or DEFAULT_WORKLOAD
    given = {k: v for k, v in options.model_dump(exclude={"device"}).items() if v is not None}
    if given:
        workload.details[OPTIONS_KEY] = given


@dataclass(frozen=True)
class Located:
    recipe_path: Path
    out_dir: Path
    stem: str  # the findings are <out_dir>/<stem>.json and .md

    def paths(self) -> tuple[Path, Path]:
        return self.out_dir / f"{self.stem}.json", self.out_dir / f"{self.stem}.md"


def output_stem(recipe_path: Path) -> str:
    """`verify` beside a run folder's recipe.json; `<name>.verify` beside any other recipe file,
    so that two recipes in one folder do not overwrite each other's findings."""
    return VERIFY_STEM if recipe_path.name == RECIPE_FILE else f"{recipe_path.stem}.{VERIFY_STEM}"


def locate(path: str | Path) -> Located:
    """A run folder (its recipe.json) or a recipe file; the findings go next to the recipe."""
    given = Path(path).expanduser()
    if given.is_dir():
        recipe = given / RECIPE_FILE
        if not recipe.is_file():
            raise RecipeError(
                f"{given} holds no {RECIPE_FILE}: give a run folder written by"
                " `autotune tune` (results/runs/DATE-WORKLOAD) or a recipe file"
            )
        return Located(recipe, given, VERIFY_STEM)
    if not given.exists():
        raise RecipeError(f"{given}: no such recipe file or run folder")
    return Located(given, given.parent, output_stem(given))


def load(path: str | Path) -> tuple[Recipe, Located]:
    where = locate(path)
    return load_recipe(where.recipe_path), where


def recorded_spec(recipe: Recipe) -> str | None:
    spec = recipe.workload.get(SPEC_KEY)
    return spec if isinstance(spec, str) and spec else None


def _no_spec_error(recipe: Recipe, shown: str) -> WorkloadError:
    name = recipe.workload.get("name")
    hint = (
        f" (its workload is named {name!r}: pass `{name}` if it is that built-in)"
        if isinstance(name, str) and name in BUILTINS
        else ""
    )
    return WorkloadError(
        f"{shown} does not record how its workload was built (tuned from Python,"
        f" or by an older autotune){hint}: pass the workload, e.g."
        f" `autotune verify {shown} my_project/train.py:make_workload`"
    )


def rebuild_workload(
    recipe: Recipe, spec: str | None = None, *, device: str = "auto", shown: str = "the recipe"
) -> tuple[Workload, str]:
    """The workload the recipe was tuned on (or `spec`, which overrides it), with the simulated
    accelerator of a --target-rate tuning put back. Returns it and the spec it was built from."""
    use = spec or recorded_spec(recipe)
    if use is None:
        raise _no_spec_error(recipe, shown)
    stored = recipe.workload.get(OPTIONS_KEY) if spec is None else None
    try:
        options = WorkloadOptions(device=device, **(stored if isinstance(stored, dict) else {}))
    except ValueError as exc:
        raise RecipeError(f"{shown}: workload.{OPTIONS_KEY}: {exc}") from None
    workload = load_workload(use, options)
    target = recipe.measured.target_rate_samples_per_s
    if target:
        workload = with_target_rate(workload, target)
    return workload, use


def differences(recipe: Recipe, workload: Workload) -> list[str]:
    """Where the rebuilt workload is not the one the recipe describes, in words."""
    notes = []
    recorded: dict[str, Any] = recipe.workload
    now = workload.describe()
    for key in ("name", "batch_size", "dataset_length"):
        if key in recorded and recorded[key] != now.get(key):
            notes.append(
                f"the workload's {key} is {now.get(key)!r} here, {recorded[key]!r} in the recipe"
            )
    env = recipe.environment
    if (env.get("ranks_per_node") or 1) > 1:
        notes.append(
            f"the recipe was measured with {env['ranks_per_node']} ranks per node (its rate"
            " is the slowest rank's); this measures one process"
        )
    return notes
