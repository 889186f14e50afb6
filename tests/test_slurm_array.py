"""Against a real Slurm: the one-node cluster of tests/slurm/setup_slurm.sh (Debian's slurm-wlm).

The fixture installs and starts it where needed (root, Debian packages); the tests are skipped,
with the reason, only where that is impossible.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

from autotune.recipe.model import load_recipe
from autotune.search.study import make_storage, trials_of

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "tests" / "slurm" / "setup_slurm.sh"
WORKLOAD = "sim:cpu_ms=0.5,step_ms=4,length=512"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}  # wide: no wrapped lines to match


@pytest.fixture(scope="module")
def slurm_cluster() -> None:
    if os.geteuid() != 0:
        pytest.skip("the Slurm test cluster needs root to install and start its daemons")
    try:
        done = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"{SETUP.name} did not finish in 10 minutes")
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"Slurm could not be installed or started here: {reason}")


def autotune(*args: str, timeout: float = 120, runner: tuple[str, ...] = ()) -> str:
    done = subprocess.run(
        [*runner, sys.executable, "-m", "autotune", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return " ".join(done.stdout.split())


def test_env_under_srun_c1_shows_one_cpu_from_slurm(slurm_cluster):
    text = autotune("env", runner=("srun", "-c", "1"))
    assert "usable_cpus 1 CPU from SLURM_CPUS_PER_TASK" in text
    assert "SLURM_CPUS_PER_TASK=1: 1 CPU per Slurm task" in text


def test_env_under_srun_without_c_reads_the_cpus_on_the_node(slurm_cluster):
    text = autotune("env", runner=("srun", "-n", "1"))
    assert "usable_cpus 1 CPU from SLURM_CPUS_ON_NODE" in text


@pytest.mark.slow
def test_array_of_three_tasks_tunes_into_one_study_and_report_merges_it(slurm_cluster, tmp_path):
    storage = tmp_path / "array.journal"
    results = tmp_path / "results"
    try:
        submitted = autotune(
            "slurm",
            WORKLOAD,
            "--array",
            "3",
            "--cpus-per-task",
            "1",
            "--time",
            "00:05:00",
            "--study",
            "array3",
            "--storage",
            str(storage),
            "--budget",
            "6",
            "--tune-args",
            "--trials 3 --device cpu",
            "--results-dir",
            str(results),
            "--wait",
            timeout=420,
        )
    except (AssertionError, subprocess.TimeoutExpired):
        logs = sorted((results / "slurm").glob("*.out"))
        print("\n".join(f"== {p}\n{p.read_text()[-2000:]}" for p in logs))
        subprocess.run(["scancel", "--name", "autotune-array3"], check=False)
        raise
    job_id = re.search(r"array job (\d+) finished", submitted).group(1)
    assert len(list((results / "slurm").glob(f"array3-{job_id}_*.out"))) == 3

    trials = trials_of(optuna.load_study(study_name="array3", storage=make_storage(storage)))
    origins = [t.origin for t in trials]
    assert {o["slurm_array_task_id"] for o in origins} == {"0", "1", "2"}  # every task wrote
    assert {o["slurm_array_job_id"] for o in origins} == {job_id}
    assert {(o["usable_cpus"], o["cpu_source"]) for o in origins} == {(1, "SLURM_CPUS_PER_TASK")}
    configs = [t.config for t in trials if t.phase == "search"]  # not the re-measurements
    assert len(configs) == len(set(configs))

    report = autotune(
        "report", "--study", "array3", "--storage", str(storage), "--out", str(tmp_path / "report")
    )
    recipe = load_recipe(tmp_path / "report" / "recipe.json")
    m = recipe.measured
    assert m.trials + m.remeasured + m.recorded == len(trials)
    assert recipe.environment["slurm_array_job_id"] == job_id
    assert recipe.environment["measured_on_nodes"] == ["localhost"]
    table = (tmp_path / "report" / "trials.md").read_text().splitlines()
    assert len([line for line in table if line.startswith("| ") and "workers" not in line]) == len(
        trials
    )
    assert f"{len(trials)} trials from 1 node(s)" in report
