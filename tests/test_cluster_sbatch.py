"""`autotune slurm --dry-run`: the array script it writes, and the mistakes it refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.cluster.sbatch import ArrayJob, render_script, sweep_points

runner = CliRunner()


def dry_run(tmp_path: Path, *args: str):
    result = runner.invoke(
        app, ["slurm", *args, "--results-dir", str(tmp_path / "res"), "--dry-run"]
    )
    script = tmp_path / "res" / "slurm"
    return result, script


def test_one_search_split_across_tasks(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/opt/autotune-src")
    result, folder = dry_run(
        tmp_path,
        "sim:cpu_ms=1",
        "--array",
        "3",
        "--cpus-per-task",
        "2",
        "--gpus-per-task",
        "1",
        "--partition",
        "gpu_p13",
        "--time",
        "00:20:00",
        "--study",
        "loader",
        "--budget",
        "30",
        "--tune-args",
        "--trials 12",
    )
    assert result.exit_code == 0, result.output
    script = (folder / "loader.sbatch").read_text()
    assert script in result.output  # printed verbatim
    storage = tmp_path / "res" / "studies" / "loader.journal"
    for line in (
        "#SBATCH --array=0-2",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --gpus-per-task=1",
        "#SBATCH --partition=gpu_p13",
        "#SBATCH --time=00:20:00",
        "#SBATCH --ntasks=1",
        f"#SBATCH --output={tmp_path / 'res' / 'slurm' / 'loader-%A_%a.out'}",
        "export PYTHONPATH=/opt/autotune-src",
        f"cd {Path.cwd()}",
        "point=(sim:cpu_ms=1 --study loader)",
    ):
        assert line in script.splitlines(), line
    assert (
        f'exec {sys.executable} -m autotune tune "${{point[@]}}" --storage {storage}'
        f" --budget 30 --results-dir {tmp_path / 'res'} --trials 12"
    ) in script
    assert f"autotune report --study loader --storage {storage}" in result.output
    subprocess.run(["bash", "-n", str(folder / "loader.sbatch")], check=True)


def test_without_pythonpath_the_script_sets_none(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    result, folder = dry_run(tmp_path, "sim", "--study", "plain")
    assert result.exit_code == 0, result.output
    script = (folder / "plain.sbatch").read_text()
    assert "PYTHONPATH" not in script and "#SBATCH --array=0-0" in script
    assert "--cpus-per-task" not in script  # Slurm's default applies


def _job(tmp_path: Path, **fields) -> ArrayJob:
    base = dict(
        workloads=["sim:cpu_ms=1"],
        storage=str(tmp_path / "s.journal"),
        budget_s=5,
        results_dir=tmp_path,
        workdir=tmp_path,
        python="echo",
        study="grid",
    )
    return ArrayJob(**{**base, **fields})


def run_task(script: str, task: int, tmp_path: Path) -> list[str]:
    """The command a task would exec (the job's python is `echo`)."""
    path = tmp_path / "job.sh"
    path.write_text(script)
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(task)}
    return subprocess.run(
        ["bash", str(path)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()


def test_a_grid_deals_the_tasks_out_over_the_points(tmp_path):
    job = _job(
        tmp_path, workloads=["sim:cpu_ms=1", "sim:cpu_ms=3"], sweeps=["batch_size=8,16"], array=8
    )
    script = render_script(job)
    assert "#SBATCH --array=0-7" in script and "case $(( SLURM_ARRAY_TASK_ID % 4 ))" in script
    commands = [run_task(script, task, tmp_path) for task in range(8)]
    studies = [c[c.index("--study") + 1] for c in commands]
    assert studies[:4] == [
        "grid/workload=sim:cpu_ms=1,batch_size=8",
        "grid/workload=sim:cpu_ms=1,batch_size=16",
        "grid/workload=sim:cpu_ms=3,batch_size=8",
        "grid/workload=sim:cpu_ms=3,batch_size=16",
    ]
    assert studies[4:] == studies[:4]  # two tasks per point
    first = commands[1]
    assert first[:5] == ["-m", "autotune", "tune", "sim:cpu_ms=1", "--batch-size"]
    assert first[5] == "16"


def test_grid_size_defaults_to_one_task_per_point(tmp_path):
    job = _job(tmp_path, sweeps=["batch_size=64,128,256"])
    assert job.tasks == 3 and "3 points" in job.mode
    assert [p.label for p in sweep_points(job.workloads, job.sweeps)] == [
        "batch_size=64",
        "batch_size=128",
        "batch_size=256",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["sim", "--array", "3", "--sweep", "batch_size=8,16"],
            "not a multiple of the 2 sweep points",
        ),
        (["sim", "--sweep", "batchsize=8"], "--batchsize is not an option of autotune tune"),
        (["sim", "--sweep", "batch_size"], "use KEY=V1,V2"),
        (["sim", "--tune-args", "--study other"], "--study is set by autotune slurm"),
        (["sim", "--tune-args", "--trials many"], "--tune-args"),
        (["sim", "--study", "a/b"], "plain name"),
        (["sim", "--array", "0"], "--array"),
    ],
)
def test_mistakes_are_refused_before_anything_is_written(tmp_path, args, message):
    result, folder = dry_run(tmp_path, *args)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not folder.exists()


def test_without_sbatch_submission_says_how_to_proceed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch on it
    result = runner.invoke(app, ["slurm", "sim", "--study", "nosb", "--results-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "sbatch not found" in result.output and "--dry-run" in result.output
