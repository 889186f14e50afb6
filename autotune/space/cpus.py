"""How many CPUs this process may really use.

`os.cpu_count()` reports the machine, not the allocation: under Slurm, cgroups, `taskset` or
containers the process may own far fewer cores, and sizing workers by the machine oversubscribes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class CpuBudget:
    count: int
    source: str  # which limit decided `count`
    affinity: int
    slurm_cpus_per_task: int | None

    def describe(self) -> str:
        parts = [f"affinity={self.affinity}"]
        if self.slurm_cpus_per_task is not None:
            parts.append(f"SLURM_CPUS_PER_TASK={self.slurm_cpus_per_task}")
        return f"{self.count} CPUs from {self.source} ({', '.join(parts)})"


def _affinity_count() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # platforms without affinity (macOS): the best available answer


def _positive_int(value: str | None) -> int | None:
    try:
        number = int(value) if value is not None else None
    except ValueError:
        return None
    return number if number and number > 0 else None


def usable_cpus(environ: Mapping[str, str] | None = None) -> CpuBudget:
    env = os.environ if environ is None else environ
    affinity = _affinity_count()
    slurm = _positive_int(env.get("SLURM_CPUS_PER_TASK"))
    if slurm is not None and slurm < affinity:
        return CpuBudget(slurm, "SLURM_CPUS_PER_TASK", affinity, slurm)
    return CpuBudget(affinity, "CPU affinity", affinity, slurm)
