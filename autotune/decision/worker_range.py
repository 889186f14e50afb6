"""One worker range, which grows while more workers still pay off: the offline search's
(search/search_range.py) and the online climb's (online/policy.py).

It starts at 4 workers per usable CPU (space.py), or at a start the user gave above that; where the
user gave max_workers, it is the range, top and limit alike, on both paths (`worker_top`). Workers
that wait on storage sleep, so a storage-bound loader can gain from more than that (the bench's
deep-storage workload, results/bench). The range goes past its top
  - to the count a prediction asks for (`admit`), where the prediction says the workers would
    wait rather than compute;
  - by half (GROWTH, `grow`) where the evidence says more workers still pay (`growth_stop`):
    the best sits at the top, no larger pool measured clearly below it, the step still waits on
    the loader, and either the workers wait rather than compute, or the rate was still rising at
    the top beyond the noise (a CPU share read on a small machine does not outweigh a measured
    gain: workers that mostly compute can still gain where some items wait on storage);
within the limit (max_workers where given, else HARD_LIMIT) and while the larger pool fits in
memory (the caller's `Fits`). `stop` records why it ended where it did, for the recipe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from autotune.decision.thresholds import FALLEN, GROWTH, HARD_LIMIT, TOP_SHARE
from autotune.decision.verdict import starved
from autotune.space.space import max_workers_for

# (top, wanted) -> the largest count in (top, wanted] that fits in memory, else None with why.
Fits = Callable[[int, int], tuple[int | None, str]]


def worker_top(usable_cpus: int, max_workers: int | None, start: int = 0) -> tuple[int, int]:
    """The range's first top and its limit, the one place both are computed: the user's
    max_workers as given, for both (honoured as a cap whatever the CPUs); else the top is
    4 workers per usable CPU, at most 32 (space.max_workers_for), or the start's count where the
    user started above that, and the limit HARD_LIMIT (or that top, where above it). Assumes a
    user who names a count means it: it is neither capped by the CPUs nor grown past."""
    if max_workers is not None:
        return max_workers, max_workers
    top = max(max_workers_for(usable_cpus), start)
    return top, max(HARD_LIMIT, top)


def any_fits(top: int, wanted: int) -> tuple[int | None, str]:
    return wanted, ""


def at_top(workers: int, top: int) -> bool:
    return workers >= top - max(1, math.floor(TOP_SHARE * top))


@dataclass(frozen=True)
class Evidence:
    """What the measurements say about more workers, offline or online."""

    label: str  # the best configuration's
    workers: int  # the best's
    rate: float  # the best's
    rate_by_workers: Mapping[int, float]  # the best rate measured at each worker count
    wait_share: float | None  # the share of the best's step spent waiting on the loader
    # Why more workers would compute rather than wait (the CPUs are busy, or the fetch measured
    # at num_workers=0 computes); None where they would wait.
    computes: str | None = None


def still_rising(ev: Evidence) -> bool:
    """The best beat the previous top's pools beyond the noise: more workers were still paying."""
    below = [r for n, r in ev.rate_by_workers.items() if 0 < n <= ev.workers / GROWTH]
    return bool(below) and ev.rate >= (1 + FALLEN) * max(below)


def count_short(workers: int, wait_share: float | None, next_workers: int) -> bool:
    """Whether a starved pool of `workers` is short of workers rather than held up by convoys:
    its steady rate, scaled linearly to the next rung's `next_workers`, still falls short of the
    step's own rate (the step without its wait), that is its step waits more than
    1 - workers / next_workers of its time. A deeper prefetch rides out convoys (a slow item
    holding up the batches behind it) but adds no throughput, so a pool short of workers gets
    more workers first. Assumes the rate scales at most linearly with the count: short at the
    next rung means short by more than one."""
    if wait_share is None or workers <= 0 or next_workers <= workers:
        return False
    return wait_share > 1 - workers / next_workers


def growth_stop(ev: Evidence, top: int) -> str | None:
    """Why the range must not grow past `top` on this evidence; None where it should."""
    if not at_top(ev.workers, top):
        return f"the best has {ev.workers} workers, below the range's top of {top}"
    fallen = {
        n: r for n, r in ev.rate_by_workers.items() if n > ev.workers and r < (1 - FALLEN) * ev.rate
    }
    if fallen:
        more = max(fallen)
        return (
            f"the rate fell past the best's {ev.workers} workers ({more} workers:"
            f" {fallen[more]:.0f} against {ev.rate:.0f} samples/s)"
        )
    if not starved(ev.wait_share):
        waits = "n/a" if ev.wait_share is None else f"{100 * ev.wait_share:.0f}%"
        return (
            f"the best ({ev.label}) waits for data {waits} of the step:"
            " more workers cannot raise it"
        )
    if ev.computes is not None and not still_rising(ev):
        return ev.computes
    return None


@dataclass
class WorkerRange:
    top: int
    limit: int  # max_workers where given, else HARD_LIMIT
    explicit: bool
    fits: Fits = field(default=any_fits)
    limit_name: str = "max_workers"  # how the user spells the limit (the CLI: --max-workers)
    grown_from: int | None = None  # the first top, where it grew
    stop: str | None = None  # why it could not grow, when it was asked to

    @classmethod
    def of(
        cls,
        usable_cpus: int,
        max_workers: int | None,
        start: int = 0,
        fits: Fits = any_fits,
        limit_name: str = "max_workers",
    ) -> WorkerRange:
        """The range on `usable_cpus` (`worker_top`)."""
        top, limit = worker_top(usable_cpus, max_workers, start)
        return cls(top, limit, max_workers is not None, fits, limit_name)

    def admit(self, wanted: int, fits: Fits | None = None) -> int:
        """The count to try for `wanted` workers: the range grows to it where it may, else its
        top."""
        if wanted > self.top:
            self._raise(min(wanted, self.limit), fits)
        return min(wanted, self.top)

    def grow(self, ev: Evidence, fits: Fits | None = None) -> bool:
        """Half again past the top where the evidence says more workers pay; False (`stop`
        says why) where it does not, or may not."""
        why = growth_stop(ev, self.top)
        if why is not None:
            self.stop = why
            return False
        return self._raise(min(self.limit, math.ceil(GROWTH * self.top)), fits)

    def refuse(self, why: str) -> None:
        """It was not asked to grow, for `why` (the recipe's reason)."""
        self.stop = self.stop or why

    def _raise(self, wanted: int, fits: Fits | None) -> bool:
        if wanted <= self.top:
            self.stop = (
                f"{self.limit_name}={self.limit}"
                if self.explicit
                else f"the hard limit of {self.limit} workers"
            )
            return False
        new_top, refused = (fits or self.fits)(self.top, wanted)
        if new_top is None:
            self.stop = refused
            return False
        self.grown_from = self.grown_from or self.top
        self.top = new_top
        self.stop = None
        return True

    def why_stopped(self, workers: int, label: str, starved: bool) -> str:
        """Why the range ended at its top, for the recipe: the best's `workers` and `label`, and
        whether it still waited on the loader."""
        if self.stop:
            return self.stop
        if workers < self.top:
            return f"the best has {workers} workers, below the range's top of {self.top}"
        if not starved:
            return f"the best ({label}) no longer waits on the loader"
        return "exploring ended first"
