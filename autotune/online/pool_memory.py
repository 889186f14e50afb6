"""The worker range's memory check online (decision/worker_range.py's `Fits`), and the RAM a
configuration holds, for the cost order (decision/cost.py)."""

from __future__ import annotations

from typing import Any

import psutil

from autotune.search.guard import MemoryGuard, default_ram_budget_mib, fitting_top
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import MIB, rss_pss
from autotune.transfer.move import iter_tensors


def pss_mib(proc: psutil.Process) -> float:
    try:
        return rss_pss(proc)[1] / MIB
    except psutil.Error:  # a worker that exited meanwhile
        return 0.0


def pool_pss_mib() -> float | None:
    """This process and its workers' PSS now: the configuration's RAM for the cost order. None
    where it cannot be read."""
    try:
        me = psutil.Process()
        return pss_mib(me) + sum(map(pss_mib, me.children(recursive=True)))
    except psutil.Error:
        return None


class PoolMemory:
    """The worker range's `Fits` online, reading this process's memory now: the running pool's
    largest worker teaches the guard what one more costs (its children are the loader's workers),
    the process alone is the rest, and the first batch delivered what each batch in flight needs
    of /dev/shm. Read before each candidate starts and when the range would grow: a few
    milliseconds, a few times a run. The RAM budget and the free /dev/shm are this rank's share
    of the node's (`ranks`)."""

    def __init__(self, guard: MemoryGuard | None = None, ranks: int = 1):
        ranks = max(1, ranks)
        self.guard = guard or MemoryGuard(default_ram_budget_mib() / ranks, batch_mib=0.0,
                                          shm_sharers=ranks)
        self.batch_sized = False

    def learn_batch(self, batch: Any) -> None:
        """The first batch delivered: its tensors' bytes, as the offline probe batch's."""
        self.batch_sized = True
        self.guard.batch_mib = sum(t.nbytes for t in iter_tensors(batch)) / MIB

    def __call__(self, top: int, wanted: int) -> tuple[int | None, str]:
        return fitting_top(LoaderConfig(num_workers=top), top, wanted, self.guard,
                           main_mib=self._read())

    def room(self, config: LoaderConfig) -> str | None:
        """Why `config`'s pool would not fit in RAM or /dev/shm now, else None: every candidate
        is checked before it starts, not only a range that grows."""
        return self.guard.skip_reason(config, main_mib=self._read())

    def _read(self) -> float:
        """The process alone, now; the running pool's largest worker teaches what one costs."""
        me = psutil.Process()
        self.guard.worker_mib = max([self.guard.worker_mib, *map(pss_mib, me.children(recursive=True))])
        return pss_mib(me)
