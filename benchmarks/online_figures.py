"""`autotune bench --online`: the figures of one round, from each way's step timestamps alone.

Each way ran the same N training steps; `stamps[i]` is the time from the loop's start (before the
first `iter()`, so the worker start-up counts) to the end of step i. Comparing the same step range
of two ways compares the same work."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from autotune.strenum import StrEnum


class Way(StrEnum):
    """The three ways each workload's training runs."""

    DEFAULTS = "defaults"  # (a) PyTorch's defaults throughout
    ONLINE = "online"  # (b) autotune.DataLoader, starting from PyTorch's defaults
    IDEAL = "ideal"  # (c) the exhaustive grid's best from step 0


# Alternate the order by round, so that a slow patch of a shared machine, or a warm page cache,
# does not always favour the same way.
ORDERS = ((Way.IDEAL, Way.ONLINE, Way.DEFAULTS), (Way.DEFAULTS, Way.ONLINE, Way.IDEAL))


def order(round_index: int) -> tuple[Way, ...]:
    return ORDERS[round_index % len(ORDERS)]


@dataclass(frozen=True)
class StepTimes:
    stamps: tuple[float, ...]  # seconds from the loop's start to the end of each step

    def __post_init__(self) -> None:
        if not self.stamps:
            raise ValueError("no step was timed")
        if any(b < a for a, b in pairwise(self.stamps)):
            raise ValueError("step timestamps must not decrease")

    @property
    def steps(self) -> int:
        return len(self.stamps)

    def span(self, start: int, end: int) -> float:
        """Seconds taken by steps [start, end)."""
        if not 0 <= start < end <= self.steps:
            raise ValueError(f"no steps [{start}, {end}) in a run of {self.steps}")
        return self.stamps[end - 1] - (self.stamps[start - 1] if start else 0.0)


@dataclass(frozen=True)
class RoundFigures:
    whole: float  # (b)/(c) over all N steps: (c)'s wall time over (b)'s
    after: float | None  # (b)/(c) over steps [k, N); None: (b) explored until the last step
    vs_defaults: float | None  # (b)/(a) over all N steps: (a)'s wall time over (b)'s; None: no (a)
    exploration_cost_s: float | None  # (b)'s time for steps [0, k) less (c)'s


def round_figures(times: dict[Way, StepTimes], explored: int | None) -> RoundFigures:
    """`explored`: k, the steps (b) spent exploring (its switch to the chosen configuration
    included), None where it had not ended by the last step."""
    a, b, c = times.get(Way.DEFAULTS), times[Way.ONLINE], times[Way.IDEAL]
    n = b.steps
    if any(t.steps != n for t in times.values()):
        raise ValueError(f"the ways ran different step counts: {[t.steps for t in times.values()]}")
    if explored is not None and not 0 <= explored <= n:
        raise ValueError(f"{explored} exploration steps in a run of {n}")
    k = explored
    return RoundFigures(
        whole=c.span(0, n) / b.span(0, n),
        after=None if k is None or k == n else c.span(k, n) / b.span(k, n),
        vs_defaults=None if a is None else a.span(0, n) / b.span(0, n),
        exploration_cost_s=None if k is None else (b.span(0, k) - c.span(0, k) if k else 0.0),
    )
