"""Real frameworks, not mocks: a Lightning `Trainer.fit` script and a Hugging Face
`transformers.Trainer` script (tests/frameworks/), neither of them knowing autotune, run under
`autotune run`. Training completes, the loaders were tuned, the recipes were written."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from script_runs import FRAMEWORKS as SCRIPTS
from script_runs import autotune_run, online_folders, output_tail

from autotune.recipe.model import load_recipe


def _autotune_run(tmp_path: Path, script: str, *args: str) -> tuple[str, list[Path]]:
    results = tmp_path / "results"
    done = autotune_run(results, SCRIPTS / script, *args)
    assert done.returncode == 0, output_tail(done)
    return done.stdout, online_folders(results)


def _tuned(folder: Path, name: str) -> None:
    recipe = load_recipe(folder / "recipe.json")
    assert recipe.workload["name"] == name
    m = recipe.measured
    assert m.samples_per_s > 0 and m.exploration_steps > 0
    assert (folder / "report.md").read_text().startswith(f"# Online tuning: {name}")


FRAMEWORKS = pytest.mark.parametrize(
    "script, items, done, dataset, length",
    [
        # Two epochs of 400 steps, on the loader class the script's DataLoader name now means; the
        # run's length read off Lightning's Trainer (max_epochs=2).
        (
            "lightning_fit.py",
            "3200",
            "FIT-DONE 800 autotune.online.loader.DataLoader",
            "Items-loader",
            "a run of 800 steps (Lightning's max_epochs)",
        ),
        # transformers' Trainer re-creates the loader through accelerate's DataLoaderShard.
        (
            "transformers_train.py",
            "1600",
            "TRAIN-DONE 400",
            "Sequences-get_train_dataloader",
            "a run of 400 steps (transformers' num_train_epochs)",
        ),
    ],
    ids=["lightning", "transformers"],
)


def _runs_tuned(
    tmp_path: Path, script: str, items: str, done: str, dataset: str, length: str, *args: str
) -> Path:
    out, folders = _autotune_run(tmp_path, script, items, *args)
    print(out)  # the tables, for a run on a GPU read with -s
    assert done in out
    assert len(folders) == 1
    _tuned(folders[0], dataset)
    assert length in load_recipe(folders[0] / "recipe.json").measured.exploration_stop
    assert f"recipe: {folders[0] / 'recipe.json'}" in out  # its table printed after the run
    return folders[0]


@pytest.mark.slow
@FRAMEWORKS
def test_a_framework_training_script_runs_under_autotune_run(
    tmp_path, script, items, done, dataset, length
):
    _runs_tuned(tmp_path, script, items, done, dataset, length)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@FRAMEWORKS
def test_a_framework_training_script_on_a_gpu_runs_under_autotune_run(
    tmp_path, script, items, done, dataset, length
):
    folder = _runs_tuned(tmp_path, script, items, done, dataset, length, "gpu")
    assert load_recipe(folder / "recipe.json").environment["device"] == "cuda"
