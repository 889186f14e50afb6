"""The CPU budget of one rank, derived from affinity, Slurm's allocation and the ranks on the
node."""

from __future__ import annotations

import pytest

from autotune.slurm_env import job_identity, process_slot, ranks_on_node, slurm_allocation
from autotune.space.cpus import usable_cpus

JOB = {"SLURM_JOB_ID": "42"}


def budget(env: dict[str, str], affinity: int, ranks: int | None = None):
    return usable_cpus(env, affinity=affinity, ranks=ranks)


def test_outside_slurm_the_affinity_mask_is_the_budget():
    b = budget({}, affinity=6)
    assert (b.count, b.source, b.ranks) == (6, "CPU affinity", 1)
    assert "affinity 6" in b.describe()


def test_slurm_cpus_per_task_caps_a_wider_affinity():
    b = budget({**JOB, "SLURM_CPUS_PER_TASK": "1", "SLURM_CPUS_ON_NODE": "1"}, affinity=2)
    assert (b.count, b.source, b.slurm_cpus_per_task) == (1, "SLURM_CPUS_PER_TASK", 1)
    assert "SLURM_CPUS_PER_TASK=1" in b.describe()


def test_without_cpus_per_task_the_cpus_on_node_decide():
    # `srun` without -c: Slurm sets no SLURM_CPUS_PER_TASK, only the job's CPUs on the node.
    b = budget({**JOB, "SLURM_CPUS_ON_NODE": "1", "SLURM_TASKS_PER_NODE": "1"}, affinity=2)
    assert (b.count, b.source, b.slurm_cpus_per_task) == (1, "SLURM_CPUS_ON_NODE", None)


def test_cpus_on_node_are_shared_by_the_tasks_on_the_node():
    # Lightning #18723: 8 ranks on a 64-CPU allocation of a 128-core node get 8 each, not 128.
    b = budget({**JOB, "SLURM_CPUS_ON_NODE": "64", "SLURM_NTASKS_PER_NODE": "8"}, affinity=128)
    assert (b.count, b.ranks, b.ranks_source) == (8, 8, "SLURM_NTASKS_PER_NODE")


def test_a_task_bound_affinity_is_not_divided_again_by_the_other_tasks():
    # IDRIS: 8 tasks per node, 8 CPUs each, Slurm binds each task to its 8 cores.
    env = {
        **JOB,
        "SLURM_CPUS_PER_TASK": "8",
        "SLURM_CPUS_ON_NODE": "64",
        "SLURM_NTASKS_PER_NODE": "8",
    }
    assert budget(env, affinity=8).count == 8


def test_torchrun_ranks_inside_one_slurm_task_share_its_cpus():
    env = {**JOB, "SLURM_CPUS_PER_TASK": "64", "SLURM_TASKS_PER_NODE": "1", "LOCAL_WORLD_SIZE": "8"}
    b = budget(env, affinity=64)
    assert (b.count, b.ranks, b.ranks_source) == (8, 8, "LOCAL_WORLD_SIZE")
    assert "8 ranks in it" in b.describe()


def test_local_world_size_divides_the_affinity_outside_slurm():
    b = budget({"LOCAL_WORLD_SIZE": "4"}, affinity=16)
    assert (b.count, b.source, b.ranks) == (4, "CPU affinity", 4)
    assert "per rank" in b.summary()


def test_one_task_with_several_gpus_counts_one_rank_per_gpu():
    env = {
        **JOB,
        "SLURM_CPUS_ON_NODE": "32",
        "SLURM_TASKS_PER_NODE": "1",
        "SLURM_GPUS_ON_NODE": "4",
    }
    b = budget(env, affinity=32)
    assert (b.count, b.ranks) == (8, 4)
    assert b.ranks_source.startswith("SLURM_GPUS_ON_NODE")


def test_explicit_ranks_override_the_environment():
    b = budget({"LOCAL_WORLD_SIZE": "8"}, affinity=16, ranks=2)
    assert (b.count, b.ranks, b.ranks_source) == (8, 2, "--ranks-per-node")


def test_the_budget_never_drops_below_one_cpu():
    assert budget({"LOCAL_WORLD_SIZE": "8"}, affinity=2).count == 1


@pytest.mark.parametrize("value", ["", "abc", "0", "-3"])
def test_unusable_values_are_ignored(value):
    b = budget({**JOB, "SLURM_CPUS_PER_TASK": value, "LOCAL_WORLD_SIZE": value}, affinity=3)
    assert (b.count, b.source, b.ranks) == (3, "CPU affinity", 1)


@pytest.mark.parametrize("node, tasks", [("0", 2), ("2", 2), ("3", 1)])
def test_tasks_per_node_is_read_for_this_node(node, tasks):
    alloc = slurm_allocation({**JOB, "SLURM_TASKS_PER_NODE": "2(x3),1", "SLURM_NODEID": node})
    assert alloc is not None and alloc.tasks_on_node == tasks


def test_a_step_layout_wins_over_the_job_layout():
    env = {**JOB, "SLURM_TASKS_PER_NODE": "1", "SLURM_STEP_TASKS_PER_NODE": "4"}
    assert ranks_on_node(env) == (4, "SLURM_STEP_TASKS_PER_NODE")


def test_no_slurm_no_allocation():
    assert slurm_allocation({"HOME": "/root"}) is None
    assert ranks_on_node({}) == (1, "one process")


def test_process_slots_differ_across_array_tasks_and_ranks():
    slots = {
        process_slot(
            {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_NTASKS": "2", "SLURM_PROCID": str(rank)}
        )
        for task in range(3)
        for rank in range(2)
    }
    assert slots == set(range(6))
    assert process_slot({}) == 0
    assert process_slot({"RANK": "3", "WORLD_SIZE": "4"}) == 3


def test_job_identity_names_the_node_and_the_array_task():
    ident = job_identity(
        {
            "SLURMD_NODENAME": "gpu07",
            "SLURM_JOB_ID": "10",
            "SLURM_ARRAY_JOB_ID": "9",
            "SLURM_ARRAY_TASK_ID": "1",
        }
    )
    assert ident == {
        "node": "gpu07",
        "slurm_job_id": "10",
        "slurm_array_job_id": "9",
        "slurm_array_task_id": "1",
    }
