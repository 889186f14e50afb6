"""The run folder: plots, report.md tying them together, and the CLI ending on the report path."""

import csv
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune import tune
from autotune.cli.app import app
from autotune.workload.simulated import SimSpec, simulated_workload

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A rendered plot with axes, labels and data is tens of KB; a blank canvas is a few.
MIN_PLOT_BYTES = 15_000
SHORT = {"min_steps": 4, "min_seconds": 0.3, "max_seconds": 0.8, "warmup_steps": 1}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workload = simulated_workload(SimSpec.parse("cpu_ms=1,step_ms=2,batch=8,length=512"))
    return tune(
        workload,
        max_trials=4,
        budget_s=60,
        burst=SHORT,
        max_workers=3,
        results_dir=tmp_path_factory.mktemp("results"),
    )


def test_plots_are_written_as_real_pngs(run):
    for name in ("plot_split", "plot_workers", "plot_progress"):
        path = run.files[name]
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        assert len(data) > MIN_PLOT_BYTES, (name, len(data))


def test_report_links_resolve_and_show_the_verdict(run):
    report = run.files["report"].read_text()
    links = re.findall(r"\]\(([^)]+)\)", report)
    for target in (
        "recipe.json",
        "trials.md",
        "trials.csv",
        "plots/step_split.png",
        "plots/workers.png",
        "plots/progress.png",
    ):
        assert target in links
    for link in links:
        assert (run.run_dir / link).is_file(), link
    assert f"**{run.best.diagnosis.bottleneck}-bound**" in report
    assert "| host->device copy | n/a | n/a |" in report  # CPU run: never an invented 0
    # Knobs out of this CPU space, each with why; the recipe carries the same.
    assert "`pin_memory` (needs a CUDA device)" in report
    assert "`in_order` (opt-in: --knob in_order searches it)" in report
    assert run.recipe.measured.not_searched["side_stream_prefetch"] == "needs a CUDA device"


def test_every_measured_trial_has_a_verdict_in_the_tables(run):
    # Parsed as CSV: a pruned trial's status quotes its reason, commas included (split on commas,
    # this test failed whenever a busy machine got a trial pruned).
    with run.files["table_csv"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert {"data_wait_pct", "copy_pct", "compute_pct", "other_pct", "bottleneck"} <= set(rows[0])
    assert [int(r["trial"]) for r in rows] == [t.number for t in run.trials]
    for row, trial in zip(rows, run.trials, strict=True):
        if trial.ok:
            assert row["bottleneck"] in ("input", "transfer", "device", "host")
        else:  # pruned or skipped: no full window was measured, so no verdict is invented
            assert row["bottleneck"] == ""
        assert row["copy_pct"] == ""  # a CPU run: no copy share, never an invented 0
    assert any(t.ok for t in run.trials)


def test_recipe_in_the_run_folder_has_the_diagnosis(run):
    from autotune.recipe.model import load_recipe

    recipe = load_recipe(run.files["recipe"])
    assert recipe.diagnosis.bottleneck == run.best.diagnosis.bottleneck
    assert recipe.diagnosis.recommendations


def test_tune_command_ends_by_printing_the_report_path(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "tune",
            "sim:cpu_ms=0.5,step_ms=2,batch=8,length=512",
            "--trials",
            "2",
            "--budget",
            "60",
            "--max-workers",
            "2",
            "--results-dir",
            str(tmp_path),
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("report: ") and last.endswith("report.md")
    assert Path(last.removeprefix("report: ")).is_file()
    assert "bottleneck: " in result.output
