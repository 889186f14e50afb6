"""Bad input, clear errors: every mistake below exits with code 2 and one line on stderr saying
what to fix, with no traceback unless --debug."""

from __future__ import annotations

import json

import pytest
from robust_support import HOSTILE, run_cli, spec
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig

BAD_INPUT = 2


def _recipe_json() -> dict:
    recipe = Recipe.from_config(
        LoaderConfig(num_workers=2, prefetch_factor=2),
        measured={"samples_per_s": 2.0, "baseline_samples_per_s": 1.0, "speedup": 2.0},
        workload={},
        environment={},
    )
    return json.loads(recipe.to_json())


def _with(block: str, key: str, value: object) -> str:
    data = _recipe_json()
    data[block][key] = value
    return json.dumps(data)


TUNE_CASES = [
    (["nonexistent.py:factory"], "workload file nonexistent.py does not exist"),
    (["no_such_module_xyz:factory"], "module 'no_such_module_xyz' not found"),
    (["nosuchthing"], "unknown workload 'nosuchthing': use a built-in"),
    ([spec("nope")], f"{HOSTILE} has no callable 'nope'"),
    (["autotune.workload.simulated:nope"], "autotune.workload.simulated has no callable 'nope'"),
    ([spec("not_a_workload")], "returned Items, not an autotune.Workload"),
    (
        [spec("factory_raises")],
        "the factory raised FileNotFoundError: /data/train: no such dataset",
    ),
    ([spec("empty")], "dataset of workload 'empty' is empty"),
    ([spec("smaller_than_a_batch")], "has 7 items, fewer than one batch of 8"),
    ([spec("zero_batch")], "batch_size must be a positive integer, got 0"),
    (["sim:batch=0"], "batch_size must be a positive integer, got 0"),
    (["sim", "--batch-size", "0"], "--batch-size: Input should be greater than 0"),
    (["sim", "--device", "cuda"], "no CUDA GPU is available here; use --device cpu or auto"),
    (["sim", "--budget", "0.2"], "--budget 0.2 s cannot fit even one burst"),
    (["sim", "--budget", "0"], "--budget: Input should be greater than 0"),
    (["sim", "--trials", "0"], "--trials: Input should be greater than or equal to 1"),
    (["sim", "--ram-budget", "1"], "--ram-budget 1 MiB cannot fit even PyTorch's defaults"),
]


def _one_line_error(result, expected: str) -> None:
    assert result.exit_code == BAD_INPUT, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args, expected", TUNE_CASES, ids=[" ".join(a) for a, _ in TUNE_CASES])
def test_bad_tune_input_is_one_line_and_exit_2(tmp_path, args, expected):
    result = CliRunner().invoke(app, ["tune", *args, "--results-dir", str(tmp_path)])
    _one_line_error(result, expected)


def test_unwritable_results_dir(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = CliRunner().invoke(app, ["tune", "sim", "--results-dir", str(blocker / "results")])
    _one_line_error(
        result, f"--results-dir {blocker / 'results'} is not writable (Not a directory)"
    )


def test_resume_of_a_folder_that_is_not_a_run(tmp_path):
    missing = CliRunner().invoke(app, ["tune", "sim", "--resume", str(tmp_path / "nope")])
    _one_line_error(missing, "no such run folder")
    not_a_run = CliRunner().invoke(app, ["tune", "sim", "--resume", str(tmp_path)])
    _one_line_error(not_a_run, "no study.journal in it, so nothing to continue")


RECIPE_CASES = [
    ("{not json", "is not JSON (line 1: Expecting property name enclosed in double quotes)"),
    ('["a list"]', "is not a recipe: expected a JSON object"),
    (
        json.dumps({"autotune_recipe": 2}),
        "unsupported autotune_recipe version 2 (this autotune reads version 1)",
    ),
    (_with("dataloader", "num_wrkers", 2), "dataloader.num_wrkers: Extra inputs are not permitted"),
    (
        _with("dataloader", "num_workers", -1),
        "dataloader.num_workers: Input should be greater than or equal to 0",
    ),
    (
        _with("transfer", "non_blocking", "sometimes"),
        "transfer.non_blocking: Input should be a valid boolean",
    ),
]


@pytest.mark.parametrize(
    "text, expected", RECIPE_CASES, ids=[e.split(":")[0] for _, e in RECIPE_CASES]
)
def test_bad_recipe_is_one_line_and_exit_2(tmp_path, text, expected):
    path = tmp_path / "recipe.json"
    path.write_text(text)
    _one_line_error(CliRunner().invoke(app, ["show", str(path)]), expected)


def test_missing_recipe(tmp_path):
    result = CliRunner().invoke(app, ["show", str(tmp_path / "missing.json")])
    _one_line_error(result, "missing.json: No such file or directory")


def test_valid_recipe_is_shown(tmp_path):
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps(_recipe_json()))
    assert CliRunner().invoke(app, ["show", str(path)]).exit_code == 0


def test_real_process_prints_one_line_and_debug_shows_the_traceback():
    plain = run_cli("tune", "nonexistent.py:factory")
    assert plain.returncode == BAD_INPUT
    assert plain.stderr.strip() == "error: workload file nonexistent.py does not exist"
    debug = run_cli("tune", "nonexistent.py:factory", "--debug")
    assert debug.returncode != 0 and debug.returncode != BAD_INPUT
    assert "Traceback" in debug.stderr and "WorkloadError" in debug.stderr
