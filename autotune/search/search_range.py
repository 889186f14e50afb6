"""The search's worker range: the one worker range (decision/worker_range.py) read from bursts,
and the search space it bounds.

When the search would end, the range is asked to grow, on the evidence of the best burst so far
(its wait share and CPU use, diagnosis/) and of the rates measured at each worker count; its new
points are measured first. Before the search, a probe that predicts more workers than the range
holds (a waiting loader: the prediction stops where a CPU-bound one would run out of cores)
starts it one past the prediction, so that the seeds sit where the answer is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from autotune.decision.worker_range import Evidence, WorkerRange
from autotune.diagnosis import Context
from autotune.diagnosis.diagnose import diagnose
from autotune.diagnosis.effects import workers_at
from autotune.probe.ceilings import Ceilings
from autotune.search.choose import pick_best
from autotune.search.guard import MemoryGuard, fitting_top
from autotune.search.trial import TrialRecord
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace


def evidence(best: TrialRecord, trials: list[TrialRecord], context: Context) -> Evidence:
    """What the bursts say about more workers: the best's wait and CPU use, and the rate at each
    worker count, each configuration's pooled over its bursts as online over its windows. Where
    epoch restarts matter, the rates are compared at one persistence setting (effects.workers_at),
    and the best worker count is the fastest there: a count measured without persistent workers
    is not read as slower for restarts it would not pay with them."""
    verdict = diagnose(best.burst, context).verdict
    e = verdict.evidence
    computes = (
        f"the workers compute, not wait: CPU {e.host_cpu_pct:.0f}% of"
        f" {context.usable_cpus} usable CPUs at {best.config.num_workers} workers"
        if e.cpu_saturated
        else None
    )
    at = workers_at(trials)
    rates = at.rates
    top = best.config
    if at.setting is not None and rates:
        top = at.by_workers[max(rates, key=lambda w: rates[w])].config
    if at.setting is not None and top.num_workers > 0:
        top = replace(top, persistent_workers=at.setting)  # the setting its rate is read at
    return Evidence(
        label=top.label(),
        workers=top.num_workers,
        rate=rates.get(top.num_workers, best.rate),
        rate_by_workers=rates,
        wait_share=e.split.wait_pct / 100,
        computes=computes,
    )


@dataclass
class SearchRange:
    """The search's space, whose worker range may grow; `stop` says why it ended where it did.
    The space's worker count is the range's top, read from it (`space`), never kept apart."""

    knobs: SearchSpace  # the space's other bounds (its own max_workers is not read)
    range: WorkerRange

    @classmethod
    def of(cls, space: SearchSpace, usable_cpus: int, max_workers: int | None) -> SearchRange:
        return cls(space, WorkerRange.of(usable_cpus, max_workers, limit_name="--max-workers"))

    @property
    def space(self) -> SearchSpace:
        return replace(self.knobs, max_workers=self.range.top)

    def in_context(self, context: Context) -> Context:
        """`context` with the range's top as its max_workers, for the diagnosis."""
        return replace(context, max_workers=self.range.top)

    @property
    def stop(self) -> str | None:
        return self.range.stop

    @property
    def grown_from(self) -> int | None:
        return self.range.grown_from

    def grow(
        self, trials: list[TrialRecord], guard: MemoryGuard, context: Context
    ) -> list[LoaderConfig]:
        """The points to measure first in the grown range (the best's other knobs at the middle
        of the new stretch and at its top); [] where it does not grow (`stop` then says why)."""
        best = pick_best(trials)
        if best is None or best.result is None:
            self.range.stop = "no configuration was measured"
            return []
        top = self.range.top
        if not self.range.grow(
            evidence(best, trials, context), partial(fitting_top, best.config, guard=guard)
        ):
            return []
        middle = (top + 1 + self.range.top) // 2
        return [
            replace(best.config, num_workers=n) for n in dict.fromkeys((middle, self.range.top))
        ]

    def follow_prediction(self, ceilings: Ceilings, guard: MemoryGuard) -> None:
        """Start the range one past the probe's prediction where that lies above its top."""
        top = self.range.top
        fits = partial(fitting_top, LoaderConfig(num_workers=top, prefetch_factor=2), guard=guard)
        self.range.admit(ceilings.predicted_workers(self.range.limit) + 1, fits)
        self.range.stop = None  # a prediction past what fits is no reason the range stopped

    def ended(self, reason: str) -> None:
        """The search ended on `reason` without asking the range to grow (budget, signal)."""
        self.range.refuse(f"the search ended first ({reason})")
