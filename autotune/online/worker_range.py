"""The online climb's worker range, which grows while more workers still pay off, as the offline
search's does (search/worker_range.py).

It starts at 4 workers per usable CPU (space.py). Workers that wait on storage sleep, so a
storage-bound loader can gain from more than that: on the bench's deep-storage workload (2 CPUs)
the grid's best has 14 workers, and an online range that stopped at 8 ran at 0.89 of it. The range
goes past its top
  - to the count the prediction asks for (predict.py, whose cores cap holds only where the fetch
    computes: a prediction past the top says the workers would wait, not compute);
  - by half (GROWTH) where the best sits at the top and the loop still waits on it, unless a
    prediction from its own rate says the top is enough (the fetch computes: more workers would
    contend for the same cores);
within the limit (the max_workers option where given, else HARD_LIMIT) and while the larger pool
fits in memory (search/guard.py's budget, with the per-worker PSS of the pool running now).
`stop` records why it ended where it did, for the recipe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import psutil

from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.worker_range import GROWTH, HARD_LIMIT, fitting_top
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import MIB, rss_pss

# (top, wanted) -> the largest count in (top, wanted] that fits in memory, else None with why.
Fits = Callable[[int, int], tuple[int | None, str]]


def any_fits(top: int, wanted: int) -> tuple[int | None, str]:
    return wanted, ""


def pool_memory(guard: MemoryGuard | None = None, ranks: int = 1) -> Fits:
    """A Fits reading this process's memory now: the running pool's largest worker teaches the
    guard what one more costs (its children are the loader's workers), the process alone is the
    rest. Read only when the range would grow: a few milliseconds, a couple of times a run. The
    RAM budget is this rank's share of the node's (`ranks` on it)."""
    guard = guard or MemoryGuard(default_ram_budget_mib() / max(1, ranks), batch_mib=0.0)

    def pss_mib(proc: psutil.Process) -> float:
        try:
            return rss_pss(proc)[1] / MIB
        except psutil.Error:  # a worker that exited meanwhile
            return 0.0

    def fits(top: int, wanted: int) -> tuple[int | None, str]:
        me = psutil.Process()
        guard.worker_mib = max([guard.worker_mib, *map(pss_mib, me.children(recursive=True))])
        return fitting_top(LoaderConfig(num_workers=top), top, wanted, guard,
                           main_mib=pss_mib(me))

    return fits


@dataclass
class WorkerRange:
    top: int
    limit: int  # the max_workers option where given, else HARD_LIMIT
    explicit: bool
    fits: Fits = field(default=any_fits)
    grown_from: int | None = None  # the first top, where it grew
    stop: str | None = None  # why it could not grow, when it was asked to

    @classmethod
    def of(cls, default_top: int, max_workers: int | None, start: int = 0,
           fits: Fits = any_fits) -> "WorkerRange":
        """The max_workers option where given; else from the default top, or the start's count
        where the user started above it."""
        if max_workers is not None:
            return cls(max_workers, max_workers, True, fits)
        return cls(max(default_top, start), max(HARD_LIMIT, default_top, start), False, fits)

    def admit(self, wanted: int) -> int:
        """The count to try for `wanted` workers: the range grows to it where it may, else its
        top."""
        if wanted > self.top:
            self._raise(min(wanted, self.limit))
        return min(wanted, self.top)

    def grow(self) -> bool:
        """Half again past the top; False (`stop` says why) where it may not."""
        return self._raise(min(self.limit, math.ceil(GROWTH * self.top)))

    def refuse(self, why: str) -> None:
        """It was not asked to grow, for `why` (the recipe's reason)."""
        self.stop = why

    def _raise(self, wanted: int) -> bool:
        if wanted <= self.top:
            self.stop = (f"max_workers={self.limit}" if self.explicit
                         else f"the hard limit of {self.limit} workers")
            return False
        new_top, refused = self.fits(self.top, wanted)
        if new_top is None:
            self.stop = refused
            return False
        self.grown_from = self.grown_from or self.top
        self.top = new_top
        self.stop = None
        return True

    def why_stopped(self, best: LoaderConfig, starved: bool) -> str:
        """Why the range ended at its top, for the recipe."""
        if self.stop:
            return self.stop
        if best.num_workers < self.top:
            return f"the best has {best.num_workers} workers, below the range's top of {self.top}"
        if not starved:
            return f"the best ({best.label()}) no longer waits on the loader"
        return "exploring ended first"
