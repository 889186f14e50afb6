"""The timed window of a burst, as pure functions of its marks: when it may end, and its rate.

One mark per step: the time, the samples consumed so far, the loader's backlog of finished
batches (backlog.py) and the time the training loop has waited for batches so far. The rate is
what the pair sustains: the lower of
  - the loader's production: consumed samples plus the change of the backlog across the span. A
    loader-bound window no longer gets credit for batches made before it began, nor blame for
    batches made and left in the buffer at its end;
  - the consumer's capacity: consumed samples over the time it did not wait for a batch not yet
    made (a ready batch's hand-over is the loop's own work: next_mark). A loader faster than the
    step fills its buffer during the window, and that surplus is no throughput: counted as
    production, it put a 20 ms step that can take 800 samples/s at 842.

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
    waited: float | None = None  # seconds spent waiting for batches since the window began
    # The part of `waited` spent on pulls that found no finished batch (next_mark); None: all of it.
    starved: float | None = None


def span_rate(marks: list[Mark], lo: int, hi: int) -> float:
    """Samples/s sustained between marks lo and hi: the lower of production and capacity."""
    a, b = marks[lo], marks[hi]
    consumed = b.samples - a.samples
    produced: float = consumed
    span = max(b.t - a.t, 1e-12)
    if a.backlog is not None and b.backlog is not None and hi > lo:
        produced += (
            (b.backlog - a.backlog) * consumed / (hi - lo)
        )  # batches at this span's mean size
    rate = max(produced, 0) / span
    starved = _starved(a, b)
    if starved is not None:
        busy = span - starved
        if busy > 0:
            rate = min(rate, consumed / busy)
    return rate


def _starved(a: Mark, b: Mark) -> float | None:
    """Seconds between the marks that the loop waited for a batch not yet made."""
    if a.starved is not None and b.starved is not None:
        return b.starved - a.starved
    if a.waited is not None and b.waited is not None:
        return b.waited - a.waited
    return None


def found_ready(backlog_before: int | None) -> bool:
    """Whether finished batches were waiting when a pull began (`backlog_before`, read at the
    previous hand-out; None: unknown)."""
    return backlog_before is not None and backlog_before > 0


@dataclass
class PullWaits:
    """How long one pool's pulls waited for batches not yet made (`unready`), pull by pull: the
    wait its loader, not its step, caused. The online prediction reads a pool's rate as its
    workers' only where it is real (online/predict.py), and a tie goes to the cheaper only where
    its own is not (decision/verdict.py: takes_tie).

    A pull that found no finished batch waited all its time for the loader. One that found some
    may still wait: torch hands batches out in order, and the backlog counts batches finished out
    of order behind a slow one (a convoy's head). Its wait past the hand-over is then the loader's;
    the hand-over (receiving a batch from a worker, on a busy machine behind the workers for a
    core) is the loop's own work, which more workers lengthen rather than shorten. It is taken as
    the least wait of a pull that found finished batches, in this pool. Assumes the hand-over
    varies little between pulls of one pool: what it varies is counted as unready, as is a batch
    finished during the step before (the backlog read 0), both erring towards more workers."""

    backlog: int | None = None  # at the last hand-out
    handover_s: float | None = None  # the least wait of a pull that found finished batches

    def unready(self, wait_s: float, backlog_after: int | None) -> float:
        """One pull's wait for the loader; `backlog_after`, read as it handed its batch out."""
        before, self.backlog = self.backlog, backlog_after
        if not found_ready(before):
            return wait_s
        if self.handover_s is None or wait_s < self.handover_s:
            self.handover_s = wait_s
        return wait_s - self.handover_s

    def new_epoch(self) -> None:
        """iter() again: its first pull refills the pool."""
        self.backlog = None

    def new_pool(self) -> None:
        self.backlog = self.handover_s = None


def next_mark(
    marks: list[Mark], t: float, samples: int, backlog: int | None, waited: float | None
) -> Mark:
    """The mark after `marks`' last. A pull that found finished batches waiting is counted as the
    hand-over of a ready batch, the loop's own work: counted as waiting, a filling buffer would
    read as a faster loader than a plain training loop sustains (results/bench/hand-over). For
    the rate's bound this errs towards the lower rate; `PullWaits` also counts a convoy's head."""
    last = marks[-1] if marks else None
    starved = None
    if (
        last is not None
        and last.starved is not None
        and waited is not None
        and last.waited is not None
    ):
        wait = waited - last.waited
        starved = last.starved + (0.0 if found_ready(last.backlog) else wait)
    elif last is None and waited is not None:
        starved = 0.0
    return Mark(t, samples, backlog, waited, starved)


def window_rate(marks: list[Mark]) -> float:
    return span_rate(marks, 0, len(marks) - 1)


def balanced(marks: list[Mark]) -> bool:
    first, last = marks[0].backlog, marks[-1].backlog
    return first is None or last is None or abs(last - first) <= BALANCED_WITHIN


def window_complete(
    marks: list[Mark], *, min_steps: int, min_seconds: float, depth: int, tolerance: float
) -> bool:
    steps = len(marks) - 1
    if steps < max(min_steps, depth) or marks[-1].t - marks[0].t < min_seconds:
        return False
    return balanced(marks) and halves_agree(marks, tolerance)


def halves_agree(marks: list[Mark], tolerance: float) -> bool:
    steps = len(marks) - 1
    mid = steps // 2
    first, second = span_rate(marks, 0, mid), span_rate(marks, mid, steps)
    return abs(first - second) <= tolerance * second
