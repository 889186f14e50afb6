"""The recipe says where it holds: Slurm job and array ids, node, CPU budget and its source."""

from __future__ import annotations

from typer.testing import CliRunner

from autotune.api import tune
from autotune.cli.app import app
from autotune.workload.simulated import SimSpec, simulated_workload

SLURM_TASK = {
    "SLURM_JOB_ID": "105",
    "SLURM_ARRAY_JOB_ID": "100",
    "SLURM_ARRAY_TASK_ID": "5",
    "SLURM_CPUS_PER_TASK": "1",
    "SLURM_CPUS_ON_NODE": "1",
    "SLURMD_NODENAME": "gpu042",
}


def test_recipe_and_trials_carry_the_slurm_task_they_were_measured_in(monkeypatch):
    for name, value in SLURM_TASK.items():
        monkeypatch.setenv(name, value)
    result = tune(
        simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=8, length=256)),
        max_trials=1,
        results_dir=None,
        device="cpu",
        burst=dict(min_steps=4, min_seconds=0.2, max_seconds=0.5, warmup_steps=1),
    )
    env = result.recipe.environment
    assert (env["slurm_job_id"], env["slurm_array_job_id"], env["slurm_array_task_id"]) == (
        "105",
        "100",
        "5",
    )
    assert env["node"] == "gpu042"
    assert (env["usable_cpus"], env["cpu_source"]) == (1, "SLURM_CPUS_PER_TASK")
    assert "SLURM_CPUS_PER_TASK=1" in env["cpu_budget"]
    assert result.trials[0].origin == env


def test_env_shows_the_budget_and_how_it_was_derived(monkeypatch):
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    for name in SLURM_TASK:
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(app, ["env", "--ranks-per-node", "2"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "per rank from CPU affinity" in text
    assert "2 ranks on the node (--ranks-per-node)" in text
    assert "not under Slurm" in text
