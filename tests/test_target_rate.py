"""--target-rate: the step becomes a simulated accelerator consuming that many samples/s."""

import pytest
import torch
from timing_fakes import FakeClock, scheduled_workload
from typer.testing import CliRunner

from autotune.burst import runner
from autotune.burst.runner import BurstSettings, run_burst
from autotune.cli.app import app
from autotune.recipe.model import load_recipe
from autotune.space.config import LoaderConfig
from autotune.telemetry import phases
from autotune.workload import accelerator
from autotune.workload.accelerator import SimulatedAccelerator, with_target_rate
from autotune.workload.simulated import SimSpec, simulated_workload

SETTINGS = BurstSettings(min_steps=8, min_seconds=0.8, max_seconds=1.5, warmup_steps=2)
CHEAP = "cpu_ms=0.01,step_ms=500,batch=16"  # the replaced step would take 500 ms per batch


def test_with_target_rate_replaces_the_step():
    workload = simulated_workload(SimSpec.parse(CHEAP))
    what_if = with_target_rate(workload, 400.0)
    assert isinstance(what_if.step, SimulatedAccelerator)
    assert what_if.details["target_rate_samples_per_s"] == 400.0
    assert what_if.step.device_seconds([torch.zeros(16, 3)]) == 16 / 400.0


def test_target_rate_bounds_the_measured_rate(monkeypatch):
    # Cheap items (0.16 ms a batch of 16 on one worker): the simulated device is the limit, so the
    # measured rates follow the targets. On a fake clock: exactly, whatever the machine does.
    clock = FakeClock().install(monkeypatch, runner, phases, accelerator)
    slow_step = simulated_workload(SimSpec.parse(CHEAP)).step
    workload = scheduled_workload(clock, batch_size=16, batch_s=16 * 0.00001, step=slow_step)
    config = LoaderConfig(num_workers=1, prefetch_factor=4)
    rates = {}
    for target in (200.0, 400.0):
        r = run_burst(with_target_rate(workload, target), config, torch.device("cpu"), SETTINGS)
        rates[target] = r.samples_per_s
        assert r.samples_per_s == pytest.approx(target)  # the device it stands for, no faster
        assert r.device_busy_s == pytest.approx(r.window_s)  # ... and busy all the time
    assert rates[400.0] / rates[200.0] == pytest.approx(2.0)  # the 500 ms step held both at 32/s


def test_tune_command_with_target_rate_records_the_what_if(tmp_path):
    out = tmp_path / "recipe.json"
    result = CliRunner().invoke(
        app,
        [
            "tune",
            f"sim:{CHEAP},length=512",
            "--target-rate",
            "300",
            "--trials",
            "2",
            "--budget",
            "60",
            "--max-workers",
            "2",
            "--results-dir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    recipe = load_recipe(out)
    assert recipe.measured.target_rate_samples_per_s == 300.0
    assert recipe.measured.samples_per_s > 0  # its bound on the rate: on a fake clock above
    assert recipe.diagnosis.evidence["target_rate_samples_per_s"] == 300.0
    report = next(tmp_path.glob("runs/*/report.md")).read_text()
    assert "What-if" in report and "300 samples/s" in report


def test_target_rate_must_be_positive(tmp_path):
    result = CliRunner().invoke(
        app, ["tune", "sim:", "--target-rate", "0", "--results-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "--target-rate" in result.output
