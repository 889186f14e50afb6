import json
import textwrap

import pytest
from conftest import children
from typer.testing import CliRunner

import autotune
from autotune.cli.app import app

runner = CliRunner()

QUICK_SIM = "sim:cpu_ms=1,step_ms=5,batch=8,shape=4,length=512"
FACTORY = """
    import time
    import torch
    from torch.utils.data import TensorDataset
    import autotune

    def factory():
        data = TensorDataset(torch.randn(256, 3, 8, 8), torch.randint(0, 2, (256,)))
        return autotune.Workload(data, 16, lambda batch: time.sleep(0.004), name="never-seen")
"""


def _tune(tmp_path, *args):
    return runner.invoke(app, ["tune", *args, "--results-dir", str(tmp_path / "results")])


@pytest.mark.slow
def test_tune_end_to_end_on_a_simulated_workload(tmp_path):
    out = tmp_path / "recipe.json"
    # The trial cap, not the budget, ends this run: a loaded machine slows bursts down.
    result = _tune(tmp_path, QUICK_SIM, "--budget", "90", "--trials", "3", "--out", str(out))
    assert result.exit_code == 0, result.output
    recipe = autotune.load_recipe(out)
    assert recipe.measured.trials == 3
    assert recipe.workload["spec"] == QUICK_SIM  # what `autotune verify` rebuilds it from
    # Rates only exist: how the tuned one compares with the defaults is the bench's claim.
    assert recipe.measured.samples_per_s > 0 and recipe.measured.baseline_samples_per_s > 0
    # The recipe's rate, measured after the choice: by the record bursts, one or more.
    assert 1 <= recipe.measured.recorded == recipe.measured.measurements
    run_dir = next((tmp_path / "results" / "runs").iterdir())
    assert {p.name for p in run_dir.iterdir()} >= {
        "recipe.json",
        "trials.md",
        "trials.csv",
        "study.journal",
    }
    table = (run_dir / "trials.md").read_text()
    # Header, the 3 search trials, the re-measurements of the best few and the record burst;
    # best marked.
    m = recipe.measured
    assert table.count("\n| ") == 4 + m.remeasured + m.recorded and "**best**" in table
    assert "PyTorch defaults" in result.output and "report:" in result.output
    assert children() == []


@pytest.mark.slow
def test_tune_a_file_factory_it_has_never_seen(tmp_path):
    path = tmp_path / "user_workload.py"
    path.write_text(textwrap.dedent(FACTORY))
    out = tmp_path / "r.json"
    result = _tune(tmp_path, f"{path}:factory", "--budget", "10", "--out", str(out))
    assert result.exit_code == 0, result.output
    recipe = json.loads(out.read_text())
    assert recipe["workload"]["name"] == "never-seen"
    assert recipe["transfer"]["channels_last"] in (True, False)
    assert recipe["measured"]["rate_from"] == "record"  # even a 10 s budget keeps room for it


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope"], "unknown workload 'nope'"),
        ([QUICK_SIM, "--device", "cuda"], "no CUDA GPU is available"),
        ([QUICK_SIM, "--budget", "0"], "--budget: Input should be greater than 0"),
        (["missing.py:factory"], "workload file missing.py does not exist"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    if "cuda" in args and __import__("torch").cuda.is_available():
        pytest.skip("a GPU is present")
    result = _tune(tmp_path, *args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and message in " ".join(result.output.split()), result.output


def test_show_and_env(tmp_path):
    recipe = next(
        iter(
            __import__("pathlib")
            .Path(__file__)
            .resolve()
            .parent.parent.glob("recipes/example-*.json")
        )
    )
    shown = runner.invoke(app, ["show", str(recipe)])
    assert shown.exit_code == 0 and "num_workers" in shown.output and "recipe.wrap" in shown.output
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert runner.invoke(app, ["show", str(bad)]).exit_code == 2
    env = runner.invoke(app, ["env"])
    assert env.exit_code == 0 and "usable_cpus" in env.output and "CPU affinity" in env.output


def test_api_tune_returns_recipe_trials_and_loader(tmp_path):
    from autotune.workload import load_workload

    workload = load_workload(QUICK_SIM)
    # The trial cap ends the search, with room for a loaded machine's slow bursts.
    result = autotune.tune(
        workload,
        budget_s=60,
        max_trials=3,
        results_dir=None,
        burst={"min_steps": 5, "min_seconds": 0.3, "max_seconds": 1.0},
    )
    searched = [t for t in result.trials if t.phase == "search"]  # then re-measurements
    assert len(searched) == 3 and result.trials[0].config == autotune.space.LoaderConfig()
    assert result.recipe.measured.baseline_samples_per_s == round(result.trials[0].samples_per_s, 2)
    loader = result.loader()
    assert (
        loader.batch_size == 8
        and loader.num_workers == result.recipe.dataloader_kwargs()["num_workers"]
    )
    assert len(next(iter(result.device_loader()))) == 2
    assert result.run_dir is None
    assert children() == []
