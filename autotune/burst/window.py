"""The timed window of a burst, as pure functions of its marks: when it may end, and its rate.

One mark per step: the time, the samples consumed so far, and the loader's backlog of finished
batches (backlog.py). The rate is the loader's production, not its consumption: consumed samples
plus the change of the backlog across the span. A consumer-bound loader keeps its buffer full
(the change is nil and nothing changes); a loader-bound one no longer gets credit for batches
made before the window began, nor blame for batches made and left in the buffer at its end.

A window ends once all of these hold, or at its time cap:
  - at least `min_steps` steps and `min_seconds`;
  - at least as many steps as batches can be in flight (num_workers x prefetch_factor): torch
    hands batches out in order, so a deep pool delivers in convoys about that long, and a shorter
    window samples part of one;
  - the backlog is back where it started (within one batch): the window then spans whole
    convoys, and consumed equals produced;
  - its two halves agree within `tolerance` (steady).
"""

from __future__ import annotations

from dataclasses import dataclass

# Backlog difference (batches) between a window's ends that still counts as "back where it was".
BALANCED_WITHIN = 1


@dataclass(frozen=True)
class Mark:
    t: float  # perf_counter seconds
    samples: int  # consumed since the window began
    backlog: int | None  # finished batches not yet consumed; None where it cannot be read


def span_rate(marks: list[Mark], lo: int, hi: int) -> float:
    """Samples/s produced between marks lo and hi."""
    a, b = marks[lo], marks[hi]
    consumed = b.samples - a.samples
    if a.backlog is not None and b.backlog is not None and hi > lo:
        consumed += (b.backlog - a.backlog) * consumed / (hi - lo)  # batches at this span's mean size
    return max(consumed, 0) / max(b.t - a.t, 1e-12)


def window_rate(marks: list[Mark]) -> float:
    return span_rate(marks, 0, len(marks) - 1)


def balanced(marks: list[Mark]) -> bool:
    first, last = marks[0].backlog, marks[-1].backlog
    return first is None or last is None or abs(last - first) <= BALANCED_WITHIN


def window_complete(marks: list[Mark], *, min_steps: int, min_seconds: float, depth: int,
                    tolerance: float) -> bool:
    steps = len(marks) - 1
    if steps < max(min_steps, depth) or marks[-1].t - marks[0].t < min_seconds:
        return False
    if not balanced(marks):
        return False
    mid = steps // 2
    first, second = span_rate(marks, 0, mid), span_rate(marks, mid, steps)
    return abs(first - second) <= tolerance * second
