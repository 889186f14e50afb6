"""What Slurm (and torchrun) tell a process through its environment: its allocation and identity.

Slurm sets `SLURM_CPUS_PER_TASK` only when the job asked for `-c/--cpus-per-task`;
`SLURM_CPUS_ON_NODE` (the job's CPUs on this node) and `SLURM_TASKS_PER_NODE` are always there.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Mapping

ALLOCATION_VARIABLES = (
    "SLURM_JOB_ID",
    "SLURM_CPUS_PER_TASK",
    "SLURM_CPUS_ON_NODE",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_GPUS_ON_NODE",
)


def positive_int(value: str | None) -> int | None:
    try:
        number = int(value) if value is not None else None
    except ValueError:
        return None
    return number if number and number > 0 else None


def _tasks_per_node(text: str | None, node_index: int) -> int | None:
    """This node's entry of SLURM_TASKS_PER_NODE, whose form is '2(x3),1': two tasks on each of
    three nodes, then one."""
    if not text:
        return None
    counts: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if match is None:
            return None
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts[node_index] if 0 <= node_index < len(counts) else None


@dataclass(frozen=True)
class TaskCpus:
    count: int
    variable: str
    text: str


@dataclass(frozen=True)
class SlurmAllocation:
    cpus_per_task: int | None  # only with -c/--cpus-per-task
    cpus_on_node: int | None  # the job's CPUs on this node
    tasks_on_node: int  # Slurm tasks of the job on this node
    tasks_source: str
    gpus_on_node: int | None

    @property
    def task_cpus(self) -> TaskCpus | None:
        """CPUs of one Slurm task, and which variable gave them."""
        if self.cpus_per_task is not None:
            return TaskCpus(
                self.cpus_per_task,
                "SLURM_CPUS_PER_TASK",
                f"SLURM_CPUS_PER_TASK={self.cpus_per_task}",
            )
        if self.cpus_on_node is not None:
            per_task = f" / {self.tasks_on_node} tasks" if self.tasks_on_node > 1 else ""
            return TaskCpus(
                max(1, self.cpus_on_node // self.tasks_on_node),
                "SLURM_CPUS_ON_NODE",
                f"SLURM_CPUS_ON_NODE={self.cpus_on_node}{per_task}",
            )
        return None


def slurm_allocation(env: Mapping[str, str]) -> SlurmAllocation | None:
    """The allocation of the Slurm job this process runs in; None outside Slurm."""
    if not any(name in env for name in ALLOCATION_VARIABLES):
        return None
    tasks, source = positive_int(env.get("SLURM_NTASKS_PER_NODE")), "SLURM_NTASKS_PER_NODE"
    if tasks is None:
        # Inside an srun step the step's layout is the one that shares this node.
        for name in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"):
            tasks = _tasks_per_node(env.get(name), positive_int(env.get("SLURM_NODEID")) or 0)
            if tasks is not None:
                source = name
                break
    return SlurmAllocation(
        cpus_per_task=positive_int(env.get("SLURM_CPUS_PER_TASK")),
        cpus_on_node=positive_int(env.get("SLURM_CPUS_ON_NODE")),
        tasks_on_node=tasks or 1,
        tasks_source=source if tasks else "one task",
        gpus_on_node=positive_int(env.get("SLURM_GPUS_ON_NODE")),
    )


def ranks_on_node(env: Mapping[str, str], explicit: int | None = None) -> tuple[int, str]:
    """How many training ranks share this node's CPUs, and what said so."""
    if explicit is not None:
        return explicit, "--ranks-per-node"
    local_world = positive_int(env.get("LOCAL_WORLD_SIZE"))
    if local_world is not None:
        return local_world, "LOCAL_WORLD_SIZE"
    alloc = slurm_allocation(env)
    if alloc is not None and alloc.tasks_on_node > 1:
        return alloc.tasks_on_node, alloc.tasks_source
    if alloc is not None and alloc.gpus_on_node is not None and alloc.gpus_on_node > 1:
        # One task holding several GPUs usually spawns one rank per GPU itself (Lightning,
        # mp.spawn).
        return alloc.gpus_on_node, "SLURM_GPUS_ON_NODE (one rank per GPU)"
    return 1, "one process"


def _index(value: str | None) -> int:
    return int(value) if value is not None and value.isdigit() else 0


def process_slot(env: Mapping[str, str]) -> int:
    """This process's index among all processes of a job or array: distinct per array task and
    rank."""
    procs = positive_int(env.get("SLURM_NTASKS")) or positive_int(env.get("WORLD_SIZE")) or 1
    rank = _index(env.get("SLURM_PROCID") or env.get("RANK"))
    return _index(env.get("SLURM_ARRAY_TASK_ID")) * procs + rank


def job_identity(env: Mapping[str, str]) -> dict[str, str | None]:
    """Where a measurement was taken: the node and the Slurm job, array and task."""
    return {
        "node": env.get("SLURMD_NODENAME") or socket.gethostname(),
        "slurm_job_id": env.get("SLURM_JOB_ID"),
        "slurm_array_job_id": env.get("SLURM_ARRAY_JOB_ID"),
        "slurm_array_task_id": env.get("SLURM_ARRAY_TASK_ID"),
    }
