"""How many CPUs this process may really use.

`os.cpu_count()` reports the machine, not the allocation: under Slurm, cgroups, `taskset` or
containers the process may own far fewer cores, and sizing workers by the machine oversubscribes.
And several training ranks on one node share what the node gives them: a budget that ignores
them hands every rank the whole node (Lightning's worker hint did so for years, #18723).

Per rank: the smaller of
  - CPU affinity, divided among the ranks that share the same mask, and
  - the Slurm task's CPUs (SLURM_CPUS_PER_TASK, else SLURM_CPUS_ON_NODE / tasks on the node),
    divided among the ranks started inside one task (torchrun under srun).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping

from autotune.slurm_env import ranks_on_node, slurm_allocation
from autotune.wording import counted


@dataclass(frozen=True)
class CpuBudget:
    count: int  # CPUs for one rank's loader and step
    source: str  # which limit decided `count`
    affinity: int
    slurm_cpus_per_task: int | None
    ranks: int = 1  # ranks sharing this node
    ranks_source: str = "one process"
    derivation: tuple[str, ...] = ()  # each limit considered, in words

    def summary(self) -> str:
        per = " per rank" if self.ranks > 1 else ""
        return f"{counted(self.count, 'CPU')}{per} from {self.source}"

    def describe(self) -> str:
        return f"{self.summary()} ({'; '.join(self.derivation)})"


def _affinity_count() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # platforms without affinity (macOS): the best available answer


def _share(cpus: int, ranks: int) -> int:
    return max(1, cpus // ranks)


def usable_cpus(
    environ: Mapping[str, str] | None = None,
    *,
    ranks: int | None = None,
    affinity: int | None = None,
) -> CpuBudget:
    """The CPU budget of one rank. `ranks` overrides the number of ranks found in the environment
    (LOCAL_WORLD_SIZE, Slurm's tasks per node, Slurm's GPUs on the node)."""
    env = os.environ if environ is None else environ
    affinity = _affinity_count() if affinity is None else affinity
    rank_count, rank_source = ranks_on_node(env, ranks)
    alloc = slurm_allocation(env)
    task = alloc.task_cpus if alloc is not None else None
    derivation = [
        f"affinity {affinity}",
        f"{counted(rank_count, 'rank')} on the node ({rank_source})",
    ]

    limits: list[tuple[int, str]] = []
    if alloc is not None and task is not None:
        # Ranks beyond the node's Slurm tasks were started inside a task and share its CPUs.
        per_task = max(1, math.ceil(rank_count / alloc.tasks_on_node))
        limits.append((_share(task.count, per_task), task.variable))
        derivation.append(
            f"{task.text}: {counted(task.count, 'CPU')} per Slurm task"
            + (f" / {per_task} ranks in it" if per_task > 1 else "")
        )
        # An affinity mask no wider than the task's CPUs was set for this task (Slurm's binding):
        # only the ranks inside the task share it. A wider one is the node's, shared by all ranks.
        affinity_sharers = per_task if affinity <= task.count else rank_count
    else:
        affinity_sharers = rank_count
    limits.insert(0, (_share(affinity, affinity_sharers), "CPU affinity"))
    if affinity_sharers > 1:
        derivation[0] += f" / {affinity_sharers} ranks sharing it"
    count, source = min(limits, key=lambda limit: limit[0])
    if len(limits) > 1 and limits[1][0] == count:
        source = limits[1][1]  # on a tie the allocation is the limit that matters on a cluster
    slurm = alloc.cpus_per_task if alloc is not None else None
    return CpuBudget(count, source, affinity, slurm, rank_count, rank_source, tuple(derivation))
