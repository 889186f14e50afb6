"""`autotune verify` and the steady measurement under it: timing logic with an injected clock and
fake measurements, the CLI's error paths, and one small real run checked for structure only (no
assertion on a measured rate)."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import children
from torch.utils.data import TensorDataset
from typer.testing import CliRunner

import autotune
from autotune.cli.app import app
from autotune.recipe.model import Recipe
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.verify import steady
from autotune.verify.source import locate, output_stem, record_spec
from autotune.verify.steady import (
    SteadyResult,
    alternate,
    measure_steady,
    settle_batches,
    summarize,
)
from autotune.workload.base import Workload
from autotune.workload.options import WorkloadOptions

runner = CliRunner()
TINY_SIM = "sim:cpu_ms=0.2,step_ms=2,batch=8,length=256"
W2 = LoaderConfig(num_workers=2, prefetch_factor=2)


class FakeClock:
    """Advances by `tick` seconds at every reading: the loop's timing without the wall clock."""

    def __init__(self, tick: float = 0.01):
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def _workload(items: int = 40, batch: int = 4) -> Workload:
    data = TensorDataset(torch.zeros(items, 3, 4, 4), torch.zeros(items, dtype=torch.long))
    return Workload(data, batch, lambda b: None, name="fake")


def _recipe(config: LoaderConfig = W2, workload: dict | None = None, rate: float = 500.0) -> Recipe:
    return Recipe.from_config(
        config,
        measured={"samples_per_s": rate, "baseline_samples_per_s": 250.0, "speedup": 2.0},
        workload=workload
        if workload is not None
        else {"name": "sim", "batch_size": 8, "spec": TINY_SIM},
        environment={"usable_cpus": 2, "device": "cpu"},
    )


# --- the steady loop, clocked by a fake clock ------------------------------------------------


def test_settle_cycles_the_prefetch_buffer_three_times_then_times_the_window():
    clock = FakeClock(0.01)
    result = measure_steady(
        _workload(), LoaderConfig(), "cpu", seconds=0.5, settle_s=0.2, clock=clock
    )
    assert result.settle_steps >= max(settle_batches(LoaderConfig()), 1)
    assert result.settle_s >= 0.2 and result.window_s >= 0.5
    assert result.samples == 4 * result.steps
    assert result.samples_per_s == pytest.approx(result.samples / result.window_s)
    assert result.epochs > 1  # 10 batches an epoch: the loop re-iterated the loader


def test_settle_lasts_at_least_three_buffers_of_batches_with_workers():
    clock = FakeClock(0.0001)  # settle_s passes at once: the batch count must hold it back
    result = measure_steady(
        _workload(items=400), W2, "cpu", seconds=0.01, settle_s=0.0, clock=clock
    )
    assert settle_batches(W2) == 3 * 2 * 2
    assert result.settle_steps >= 12
    assert children() == []  # the workers were shut down


def test_a_failing_step_leaves_no_worker_behind():
    def boom(batch):
        raise RuntimeError("step failed")

    work = _workload(items=400)
    work.step = boom
    with pytest.raises(RuntimeError, match="step failed"):
        measure_steady(work, W2, "cpu", seconds=0.1, settle_s=0.0)
    assert children() == []


def test_alternate_measures_a_b_a_b_and_summarizes_the_median():
    order: list[str] = []
    rates = {"w0": iter([100.0, 120.0, 110.0]), "w2 pf2": iter([300.0, 200.0, 310.0])}

    def fake(workload, config, device, seconds, *, settle_s):
        order.append(config.label())
        return SteadyResult(config, next(rates[config.label()]), 0, 0, seconds, 0.0, settle_s, 0, 1)

    seen: list[int] = []
    out = alternate(
        None,
        "cpu",
        [PYTORCH_DEFAULTS, W2, PYTORCH_DEFAULTS],
        seconds=20,
        rounds=3,
        measure=fake,
        on_result=lambda r, _: seen.append(r),
    )
    assert order == ["w0", "w2 pf2"] * 3  # duplicates measured once per round
    assert seen == [0, 0, 1, 1, 2, 2]
    summary = summarize(out)
    assert summary[PYTORCH_DEFAULTS].median == 110.0 and summary[W2].median == 300.0
    assert summary[W2].spread == pytest.approx((310 - 200) / 300)
    with pytest.raises(ValueError):
        alternate(None, "cpu", [W2], rounds=0, measure=fake)


# --- where the recipe and the findings are -----------------------------------------------------


def test_findings_go_beside_the_recipe(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "recipe.json").write_text("{}")
    assert locate(run).paths() == (run / "verify.json", run / "verify.md")
    assert locate(run / "recipe.json").stem == "verify"
    other = tmp_path / "mine.json"
    other.write_text("{}")
    assert output_stem(other) == "mine.verify"


def test_tune_records_the_spec_and_only_the_options_given():
    work = _workload()
    record_spec(work, "sim:cpu_ms=1", WorkloadOptions(device="cpu", batch_size=32))
    assert work.describe()["spec"] == "sim:cpu_ms=1"
    assert work.describe()["workload_options"] == {"batch_size": 32}
    plain = _workload()
    record_spec(plain, None, WorkloadOptions())
    assert plain.details == {"spec": "demo"}


# --- the CLI's bad input: one line, exit code 2 --------------------------------------------------


def _errors(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def _file(folder, name, text):
    (folder / name).write_text(text)
    return folder / name


@pytest.mark.parametrize(
    "make, extra, message",
    [
        (lambda p: p / "missing.json", [], "no such recipe file or run folder"),
        (lambda p: p, [], "holds no recipe.json"),
        (lambda p: _file(p, "bad.json", "{"), [], "is not JSON"),
        (lambda p: _file(p, "x.json", '{"a": 1}'), [], "unsupported autotune_recipe"),
        (
            lambda p: _recipe(workload={"name": "demo"}).save(p / "old.json"),
            [],
            "does not record how its workload was built",
        ),
        (
            lambda p: _recipe(workload={"name": "x", "spec": "nope"}).save(p / "r.json"),
            [],
            "unknown workload 'nope'",
        ),
        (
            lambda p: _recipe().save(p / "r.json"),
            ["missing.py:factory"],
            "workload file missing.py does not exist",
        ),
        (lambda p: _recipe().save(p / "r.json"), ["--rounds", "0"], "--rounds must be >= 1"),
        (lambda p: _recipe().save(p / "r.json"), ["--seconds", "0"], "--seconds must be > 0"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, make, extra, message):
    result = runner.invoke(app, ["verify", str(make(tmp_path)), *extra])
    assert result.exit_code == 2, result.output
    assert len(_errors(result)) == 1 and message in " ".join(result.output.split()), result.output


def test_a_cuda_recipe_on_a_cpu_is_refused(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    path = _recipe(LoaderConfig(num_workers=2, prefetch_factor=2, pin_memory=True)).save(
        tmp_path / "r.json"
    )
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 2 and "pin_memory needs a CUDA device" in " ".join(
        result.output.split()
    )


def test_measuring_failures_are_one_line_workload_errors(monkeypatch, tmp_path):
    def hung(*args, **kwargs):
        raise RuntimeError("DataLoader worker (pid 1) is killed by signal: Killed.")

    monkeypatch.setattr(steady, "measure_steady", hung)
    path = _recipe().save(tmp_path / "r.json")
    result = runner.invoke(app, ["verify", str(path), "--seconds", "1", "--rounds", "1"])
    assert result.exit_code == 2 and "failed while being measured" in result.output


# --- small real runs: structure only ------------------------------------------------------------


def test_verify_a_tune_result_writes_into_its_run_folder(tmp_path):
    from types import SimpleNamespace

    tuned = SimpleNamespace(
        recipe=_recipe(), workload=_workload(items=64), run_dir=tmp_path, device=torch.device("cpu")
    )
    found = autotune.verify(tuned, seconds=0.1, rounds=1, settle_s=0.0)
    assert found.recipe == str(tmp_path / "recipe.json") and found.workload == "fake"
    assert (tmp_path / "verify.json").is_file() and (tmp_path / "verify.md").is_file()
    assert [c.label for c in (found.tuned, found.defaults)] == ["w2 pf2", "w0"]
    assert children() == []


@pytest.mark.slow
def test_verify_a_tiny_sim_recipe_end_to_end(tmp_path):
    path = _recipe().save(tmp_path / "recipe.json")
    result = runner.invoke(
        app, ["verify", str(tmp_path), "--seconds", "0.3", "--rounds", "2", "--settle", "0.1"]
    )
    assert result.exit_code == 0, result.output
    for word in ("recorded:", "verified:", "difference:", "defaults:", "speed-up:"):
        assert word in result.output
    data = json.loads((tmp_path / "verify.json").read_text())
    assert data["recipe"] == str(path) and data["workload"] == TINY_SIM
    assert data["tuned"]["label"] == "w2 pf2" and data["defaults"]["label"] == "w0"
    assert len(data["tuned"]["samples_per_s"]) == 2 and len(data["defaults"]["samples_per_s"]) == 2
    assert data["recorded_samples_per_s"] == 500.0
    assert data["difference_pct"] == pytest.approx(
        100 * (500.0 - data["verified_samples_per_s"]) / data["verified_samples_per_s"], abs=0.01
    )
    assert "recorded vs verified" in (tmp_path / "verify.md").read_text()
    assert children() == []

    # The Python API: a Recipe object and a spec, nothing written.
    found = autotune.verify(_recipe(), TINY_SIM, seconds=0.2, rounds=1, settle_s=0.0, write=False)
    assert found.files == {} and len(found.tuned.samples_per_s) == 1
    assert found.verified_speedup is not None
