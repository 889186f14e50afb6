"""A worker range that grows while more workers still pay off.

The search starts at 4 x usable CPUs (space.py). Workers that wait on storage sleep, so a
storage-bound loader can gain from more of them than that. When the search would end, the range
grows by half (the new points measured first) while:
  - the best configuration sits at the top of the range (its top quarter) and no larger pool
    measured clearly below it: the rate was still rising there;
  - the step still waits for data (at least NEGLIGIBLE_WAIT_PCT of it) and the CPUs are not
    saturated: the workers wait rather than compute;
  - the larger pool fits the RAM budget and /dev/shm (guard.py);
  - the new top stays within --max-workers, else within HARD_LIMIT.
Whichever fails is recorded as why the range stopped where it did (`measured.worker_range_stop`).
Before the search, a probe that predicts more workers than the range holds (a waiting loader:
the prediction stops where a CPU-bound one would run out of cores) starts it one past the
prediction, within the same memory and limits, so that the seeds sit where the answer is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from autotune.diagnosis import Context, diagnose
from autotune.diagnosis.advice import NEGLIGIBLE_WAIT_PCT
from autotune.probe.ceilings import Ceilings
from autotune.diagnosis.effects import best_rate_by_workers
from autotune.search.choose import pick_best
from autotune.search.guard import MemoryGuard
from autotune.search.trial import TrialRecord
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from autotune.telemetry.host import tree_memory_mib

# Worker processes past this cost more in memory, file handles and scheduling than one more
# outstanding read gains, whatever the storage.
HARD_LIMIT = 64
GROWTH = 1.5  # the next top, as a multiple of the current one
TOP_SHARE = 0.25  # the best within this top share of the range counts as at the top
# More workers measured this much below the best: the rate has peaked. Beyond one burst's noise
# on a busy 2-CPU machine (up to ~5%): a single unlucky burst of a larger pool must not end it.
FALLEN = 0.05


@dataclass(frozen=True)
class Decision:
    top: int | None  # the new top; None: the range stays
    why: str  # why it grows, or why it stopped where it did


def at_top(workers: int, top: int) -> bool:
    return workers >= top - max(1, math.floor(TOP_SHARE * top))


def fitting_top(config: LoaderConfig, top: int, wanted: int, guard: MemoryGuard,
                main_mib: float | None = None) -> tuple[int | None, str]:
    """The largest worker count in (top, wanted] whose pool fits in memory, with the guard's
    reason for the first that did not. `main_mib`: the process without workers (default: its
    tree now, which between bursts has none)."""
    main = tree_memory_mib()[1] if main_mib is None else main_mib
    refused = ""
    for workers in range(wanted, top, -1):
        reason = guard.skip_reason(replace(config, num_workers=workers), main_mib=main)
        if reason is None:
            return workers, refused
        refused = refused or f"{workers} workers {reason}"
    return None, refused


def decide_growth(trials: list[TrialRecord], top: int, limit: int, explicit: bool,
                  guard: MemoryGuard, context: Context) -> Decision:
    best = pick_best(trials)
    if best is None or best.result is None:
        return Decision(None, "no configuration was measured")
    w = best.config.num_workers
    if not at_top(w, top):
        return Decision(None, f"the best has {w} workers, below the range's top of {top}")
    fallen = {n: r for n, r in best_rate_by_workers(trials).items()
              if n > w and r < (1 - FALLEN) * best.samples_per_s}
    if fallen:
        more = max(fallen)
        return Decision(None, f"the rate fell past the best's {w} workers ({more} workers:"
                              f" {fallen[more]:.0f} against {best.samples_per_s:.0f} samples/s)")
    verdict = diagnose(best.result, context).verdict
    wait_pct = verdict.evidence.split.wait_pct
    if wait_pct < NEGLIGIBLE_WAIT_PCT:
        return Decision(None, f"the best ({best.config.label()}) waits for data {wait_pct:.0f}% of"
                              f" the step ({verdict.bottleneck}-bound): more workers cannot raise it")
    if verdict.evidence.cpu_saturated:
        return Decision(None, f"the workers compute, not wait: CPU {verdict.evidence.host_cpu_pct:.0f}%"
                              f" of {context.usable_cpus} usable CPUs at {w} workers")
    if top >= limit:
        return Decision(None, f"--max-workers={limit}" if explicit else f"the hard limit of {limit} workers")
    wanted = min(limit, math.ceil(GROWTH * top))
    new_top, refused = fitting_top(best.config, top, wanted, guard)
    if new_top is None:
        return Decision(None, refused)
    return Decision(new_top, f"the best ({best.config.label()}) waited on the loader at the top of"
                             f" 0-{top} workers with CPUs to spare")


@dataclass
class WorkerRange:
    """The search's space, whose worker range may grow; `stop` says why it ended where it did."""

    space: SearchSpace
    limit: int  # --max-workers where given, else HARD_LIMIT
    explicit: bool
    stop: str | None = None
    grown_from: int | None = None  # the first top, where the range grew

    def grow(self, trials: list[TrialRecord], guard: MemoryGuard, context: Context) -> list[LoaderConfig]:
        """The points to measure first in the grown range (the best's other knobs at the middle
        of the new stretch and at its top); [] where it does not grow (`stop` then says why)."""
        top = self.space.max_workers
        decision = decide_growth(trials, top, self.limit, self.explicit, guard, context)
        if decision.top is None:
            self.stop = decision.why
            return []
        self.grown_from = self.grown_from or top
        self.space = replace(self.space, max_workers=decision.top)
        best = pick_best(trials)
        middle = (top + 1 + decision.top) // 2
        return [replace(best.config, num_workers=n) for n in dict.fromkeys((middle, decision.top))]

    def follow_prediction(self, ceilings: Ceilings, guard: MemoryGuard) -> None:
        """Start the range one past the probe's prediction where that lies above its top."""
        top = self.space.max_workers
        wanted = min(self.limit, ceilings.predicted_workers(self.limit) + 1)
        if wanted <= top:
            return
        new_top, _ = fitting_top(LoaderConfig(num_workers=top, prefetch_factor=2), top, wanted, guard)
        if new_top is not None:
            self.grown_from = top
            self.space = replace(self.space, max_workers=new_top)

    def ended(self, reason: str) -> None:
        """The search ended on `reason` without asking the range to grow (budget, signal)."""
        self.stop = self.stop or f"the search ended first ({reason})"
