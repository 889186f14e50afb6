"""Where a burst's window lies in an epoch whose length is known, and the rate of whole epochs.

A pool gets no new work for an epoch's last `depth` batches (workers x prefetch_factor): its
buffer drains to empty at every epoch end, and after iter() idle workers refill it in a convoy.
The window's rate is production (window.py: consumed plus the backlog's change), so a window
ending in that tail reads the drain as a slow loader, and one crossing the refill reads its
convoy as a fast one (spans ending in the tail read low: results/bench/epoch-bias).

So the window lies in an epoch's middle and ends before its tail; the boundary's cost is added
after (epoch.py). An epoch too short for that is measured whole instead: from the end of one
epoch's last step to the end of a later one's, the time a training loop spends on whole epochs,
boundaries included, with no model of them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from autotune.burst.window import Mark


@dataclass(frozen=True)
class EpochPlace:
    """An epoch of `batches` batches (None: no length) from a pool `depth` batches deep."""

    batches: int | None
    depth: int

    def middle(self, position: int, room: int) -> bool:
        """Batch `position` of its epoch is past the refill, with `room` batches before the tail."""
        return (
            self.batches is not None and self.depth <= position < self.batches - self.depth - room
        )

    def last_before_tail(self, position: int) -> bool:
        return self.batches is not None and position == self.batches - self.depth - 1

    def holds_window(self, room: int) -> bool:
        """Some batch of the middle has `room` more before the tail (see `middle`)."""
        return self.batches is not None and self.batches - 2 * self.depth > room

    def ends_epoch(self, position: int) -> bool:
        return self.batches is not None and position == self.batches - 1

    def whole_epoch_fits(self, step_s: float, left_s: float) -> bool:
        """From the last batch before the tail, the rest of this epoch and one whole epoch more
        fit in `left_s` at `step_s` a step (boundaries not counted: the first is a guess)."""
        return self.batches is not None and (self.depth + 1 + self.batches) * step_s <= left_s


def measured_whole(batches: int | None, depth: int, min_steps: int) -> bool:
    """Whether a burst of a pool `depth` batches deep times whole epochs of `batches`: the
    epoch is too short to hold a window of `min_steps` (at least a buffer's drain) in its middle."""
    return batches is not None and not EpochPlace(batches, depth).holds_window(
        max(min_steps, depth)
    )


@dataclass(frozen=True)
class WholeEpochs:
    """Whole epochs measured in a window: their rate and what their boundaries cost."""

    epochs: int
    samples_per_s: float  # over the whole epochs, boundaries included
    boundary_step_s: float  # median step interval across a boundary: iter(), first batch, its step
    step_s: float  # median step interval elsewhere


def whole_epochs(marks: list[Mark], edges: list[int]) -> WholeEpochs | None:
    """`edges`: indices of the marks that end an epoch's last step. None until one whole epoch."""
    if len(edges) < 2:
        return None
    first, last = edges[0], edges[-1]
    span = marks[last].t - marks[first].t
    if span <= 0:
        return None
    boundary = set(e + 1 for e in edges[:-1])
    intervals = [(i in boundary, marks[i].t - marks[i - 1].t) for i in range(first + 1, last + 1)]
    crossing = [dt for at_edge, dt in intervals if at_edge]
    inside = [dt for at_edge, dt in intervals if not at_edge] or crossing
    return WholeEpochs(
        len(edges) - 1,
        (marks[last].samples - marks[first].samples) / span,
        statistics.median(crossing),
        statistics.median(inside),
    )
