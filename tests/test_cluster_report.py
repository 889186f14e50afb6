"""`autotune report`: a sweep written by several processes on several (emulated) nodes, merged."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.recipe.model import load_recipe
from autotune.search.study import make_storage, trials_of

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "sim:cpu_ms=0.5,step_ms=4,length=512"


def tune_process(storage: Path, study: str, node: str, task: int, *extra: str) -> subprocess.Popen:
    """`autotune tune` as one array task on `node` would run it."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SLURMD_NODENAME": node,
        "SLURM_ARRAY_JOB_ID": "77",
        "SLURM_ARRAY_TASK_ID": str(task),
    }
    command = [
        sys.executable,
        "-m",
        "autotune",
        "tune",
        WORKLOAD,
        "--study",
        study,
        "--storage",
        str(storage),
        "--trials",
        "2",
        "--budget",
        "60",
        "--device",
        "cpu",
        "--results-dir",
        str(storage.parent / "runs"),
        *extra,
    ]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
def test_report_merges_a_sweep_written_by_several_processes(tmp_path):
    storage = tmp_path / "sweep.journal"
    procs = [
        tune_process(storage, "sweep/batch_size=8", "n1", 0, "--batch-size", "8"),
        tune_process(storage, "sweep/batch_size=8", "n2", 1, "--batch-size", "8"),
        tune_process(storage, "sweep/batch_size=16", "n3", 2, "--batch-size", "16"),
    ]
    for proc in procs:
        output = proc.communicate(timeout=240)[0]
        assert proc.returncode == 0, output[-3000:]

    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["report", "--study", "sweep", "--storage", str(storage), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output

    studies = {
        name: trials_of(optuna.load_study(study_name=name, storage=make_storage(storage)))
        for name in ("sweep/batch_size=8", "sweep/batch_size=16")
    }
    # Both processes of the first point wrote into its one study, from their own nodes.
    assert {t.origin["node"] for t in studies["sweep/batch_size=8"]} == {"n1", "n2"}
    assert {t.origin["slurm_array_task_id"] for t in studies["sweep/batch_size=8"]} == {"0", "1"}
    for point, batch, nodes in (("batch_size=8", 8, ["n1", "n2"]), ("batch_size=16", 16, ["n3"])):
        recipe = load_recipe(out / f"recipe-{point}.json")
        assert recipe.workload["batch_size"] == batch
        assert recipe.environment["study"] == f"sweep/{point}"
        assert recipe.environment["measured_on_nodes"] == nodes
        assert recipe.environment["node"] in nodes
        assert recipe.environment["slurm_array_job_id"] == "77"
        m = recipe.measured
        counts = m.trials + m.remeasured + m.recorded
        # search trials, re-measurements, and each process's record burst of its own choice
        assert counts == len(studies[f"sweep/{point}"])

    with (out / "trials.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == sum(len(t) for t in studies.values())
    assert {r["point"] for r in rows} == {"batch_size=8", "batch_size=16"}
    assert {r["node"] for r in rows} == {"n1", "n2", "n3"}
    assert sum(r["status"] == "best" for r in rows) == 2  # one best per point
    assert "batch_size=16" in result.output and "2 node(s)" in result.output


def test_report_names_the_studies_it_found_when_the_name_is_wrong(tmp_path):
    storage = tmp_path / "one.journal"
    optuna.create_study(study_name="real", storage=make_storage(storage))
    result = CliRunner().invoke(
        app, ["report", "--study", "typo", "--storage", str(storage), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "no study 'typo'" in result.output and "real" in result.output


def test_study_without_storage_is_refused():
    result = CliRunner().invoke(app, ["tune", "sim", "--study", "s"])
    assert result.exit_code == 2 and "--study needs --storage" in result.output
