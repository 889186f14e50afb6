"""Guards before harm: a configuration whose memory cannot fit is skipped, not run into the OOM
killer or a full /dev/shm on a shared node.

A burst's footprint is estimated as the figure BurstResult.host.peak_pss_mib measures (summed PSS
of the tuner and its workers; summed RSS would count forked workers' shared pages once each):

    tuner process now + workers x per-worker PSS measured so far + batches in flight x batch size

Batches in flight are the prefetch buffer (workers x prefetch_factor) plus the one each worker is
building. They travel from the workers through /dev/shm, so they must also fit in its free space.
The per-worker figure is learnt from the pools measured so far (it grows with copy-on-read and
leaks, pytorch#13246), so the estimate sharpens as the search goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import psutil

from autotune.burst.result import BurstResult
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import MIB, tree_memory_mib
from autotune.telemetry.shm import shm_space
from autotune.wording import counted

# tf.data's autotuner gives its buffers half of the available RAM; the same default here.
DEFAULT_RAM_SHARE = 0.5


def default_ram_budget_mib() -> float:
    return DEFAULT_RAM_SHARE * float(psutil.virtual_memory().available) / MIB


@dataclass
class MemoryGuard:
    budget_mib: float
    batch_mib: float  # one batch as collated, from the probe batch (0 if it could not be read)
    worker_mib: float = 0.0  # largest per-worker PSS measured so far; 0 until a pool has run
    # Processes on this node that grow their pools together (the local ranks of a DDP job in
    # lockstep): each may count on its share of the free /dev/shm, as of the RAM budget.
    shm_sharers: int = 1

    def in_flight_mib(self, config: LoaderConfig) -> float:
        if config.num_workers == 0:
            return 0.0  # the main process loads one batch at a time, not through /dev/shm
        return self.batch_mib * (config.prefetch_depth + config.num_workers)

    def ram_mib(self, config: LoaderConfig, main_mib: float) -> float:
        return main_mib + config.num_workers * self.worker_mib + self.in_flight_mib(config)

    def skip_reason(
        self, config: LoaderConfig, main_mib: float | None = None, shm_free_mib: float | None = None
    ) -> str | None:
        """Why `config` cannot run here, or None if its estimate fits. `main_mib` and
        `shm_free_mib` default to what is measured now."""
        main = tree_memory_mib()[1] if main_mib is None else main_mib
        need = self.ram_mib(config, main)
        if need > self.budget_mib:
            n = config.num_workers
            why = (
                f"{counted(n, 'worker')} at ~{self.worker_mib:.0f} MiB measured"
                if n
                else "the tuning process alone"
            )
            return (
                f"needs ~{need:.0f} MiB of RAM ({why}), over the budget of"
                f" {self.budget_mib:.0f} MiB"
            )
        shm_need = self.in_flight_mib(config)
        if shm_free_mib is None and shm_need > 0:
            space = shm_space()
            shm_free_mib = space.free_mib / max(1, self.shm_sharers) if space is not None else None
        if shm_free_mib is not None and shm_need > shm_free_mib:
            return (
                f"needs ~{shm_need:.0f} MiB of /dev/shm for batches in flight,"
                f" {shm_free_mib:.0f} MiB free"
            )
        return None

    def rejection(self, result: BurstResult) -> str | None:
        """Why a configuration that ran is rejected after all: its measured peak PSS exceeded
        the budget (the estimate before the burst said it would fit). None when it fits."""
        pss = result.host.peak_pss_mib
        if pss <= self.budget_mib:
            return None
        return f"measured peak PSS {pss:.0f} MiB, over the RAM budget of {self.budget_mib:.0f} MiB"

    def observe(self, result: BurstResult, main_mib: float) -> None:
        """Learn the per-worker footprint from a measured pool (`main_mib`: the tuner before it)."""
        workers = result.host.peak_workers
        if workers > 0:
            per_worker = (result.host.peak_pss_mib - main_mib) / workers
            self.worker_mib = max(self.worker_mib, per_worker)


def fitting_top(
    config: LoaderConfig, top: int, wanted: int, guard: MemoryGuard, main_mib: float | None = None
) -> tuple[int | None, str]:
    """The largest worker count in (top, wanted] whose pool of `config` fits in memory, with the
    guard's reason for the first that did not: the worker range's `Fits` (decision/worker_range.py).
    `main_mib`: the process without workers (default: its tree now, which between bursts has
    none)."""
    main = tree_memory_mib()[1] if main_mib is None else main_mib
    refused = ""
    for workers in range(wanted, top, -1):
        reason = guard.skip_reason(replace(config, num_workers=workers), main_mib=main)
        if reason is None:
            return workers, refused
        refused = refused or f"{workers} workers {reason}"
    return None, refused
