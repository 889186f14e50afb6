"""One configuration's measurement in the training loop: windows of its steady steps, and where
their time went (the step's own work, the wait inside `__next__`, the CPU of each)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from autotune.burst.window import Mark, next_mark, span_rate
from autotune.decision.verdict import Pieces, starved
from autotune.online.meter import Step
from autotune.space.config import LoaderConfig

NOT_RUN = "not run: "  # a failure prefix: refused before its pool started (policy.py:_refused)

# The order windows close in, one clock for every configuration of this process: where the climb
# measures two configurations back to back, the one brain compares them pair by pair.
_ORDER = itertools.count()


@dataclass
class Measurement:
    config: LoaderConfig
    rates: list[float] = field(default_factory=list)  # batches/s of each window
    spans: list[float] = field(default_factory=list)  # each window's seconds, its rate's divisor
    # When each window closed (_ORDER), the latest windows'; those before (remembered from another
    # run) have none.
    at: list[float] = field(default_factory=list)
    startup_s: float | None = None  # iter() of its inner loader to its first batch
    steps: int = 0  # every step it ran, warm-up included
    # The steady steps: their count, time, the wait inside it, and the CPU of both parts.
    steady_steps: int = 0
    steady_s: float = 0.0
    steady_wait_s: float = 0.0
    steady_unready_s: float = 0.0  # the part of the wait on batches not yet made (Step.unready)
    steady_wait_cpu_s: float = 0.0  # the process's, inside __next__
    steady_work_cpu_s: float = 0.0  # the process's, in the loop's own work
    # Its workers' CPU seconds over its steady windows, and the wall seconds they were read over
    # (climb_types.PoolCpu): 0 where never read.
    workers_cpu_s: float = 0.0
    workers_wall_s: float = 0.0
    # The first window measured after it was chosen and re-measured (decision/verdict.py's
    # Pieces.selected_at, the winner's curse): 0 where it never was, every window counting.
    fresh_from: int = 0
    failed: str | None = None  # the error it raised while tried: never chosen, never tried again
    # (or NOT_RUN and why, where it was refused before its pool started)
    # The most another rank of a DDP job waits on its loader in this configuration, and for
    # batches not yet made (lockstep.py).
    peer_wait_share: float | None = None
    peer_unready_share: float | None = None
    ram_mib: float | None = None  # the process and its workers' PSS, read once (on a thread)
    checked: bool = False  # a run's check of the remembered best held it (online/memory.py)
    _window: list[Step] = field(default_factory=list)
    _window_s: float = 0.0  # the open window's step time, kept as it grows (this runs every step)
    # Each closed window's steady step time, the wait inside it and that wait's part on batches not
    # yet made, in the order of `rates`: a stalled window's are left out of the shares (`_share`).
    _window_waits: list[tuple[float, float, float]] = field(default_factory=list)

    def add(self, step: Step, least: int, most: int | None = None, min_s: float = 0.0) -> bool:
        """One steady step; True when it completed a window: `least` steps or more, and `min_s`
        seconds of steps or `most` steps."""
        assert step.step_s is not None
        self._steady(step)
        self._window.append(step)
        self._window_s += step.step_s
        n = len(self._window)
        if n < least or (self._window_s < min_s and (most is None or n < most)):
            return False
        rate, span = window_rate(self._window)
        waits = (sum(x.wait_s for x in self._window), sum(x.unready for x in self._window))
        self._append(rate, span, self._window_s, *waits)
        self._new_window()
        return True

    def _append(
        self, rate: float, span: float, steady_s: float, wait_s: float, unready_s: float
    ) -> None:
        """A closed window: its rate, the seconds it is over, and the steady step time and the
        waits inside it that a stall leaves out of the wait shares."""
        self.rates.append(rate)
        self.spans.append(span)
        self.at.append(float(next(_ORDER)))
        self._window_waits.append((steady_s, wait_s, unready_s))

    def add_to_epoch(self, step: Step, steady: bool) -> None:
        """One step of a window that is a whole epoch (ClimbSettings.whole_epochs). The epoch's
        first step has no step time (the loop's time between epochs is not the loader's): its
        wait counts, which holds iter() and the refill. The steady figures (the wait share, the
        workers' rate) are of the `steady` steps, past the segment's warm-up as in a windowed
        run: a refill is one batch's latency, and a fresh pool's first round comes as its
        workers were forked, one after another, neither of which more workers shorten."""
        if step.step_s is None:
            self._window_s += step.wait_s
        else:
            if steady:
                self._steady(step)
            self._window_s += step.step_s
        self._window.append(step)

    def close_epoch(self) -> bool:
        """The epoch ended: its steps over its time make a window. True if one was added."""
        n, seconds = len(self._window), self._window_s
        self._new_window()
        if n < 2 or seconds <= 0:
            return False
        self._append(n / seconds, seconds, 0.0, 0.0, 0.0)  # a whole epoch's wait is the epoch's
        return True

    def _steady(self, step: Step) -> None:
        assert step.step_s is not None
        self.steady_steps += 1
        self.steady_s += step.step_s
        self.steady_wait_s += step.wait_s
        self.steady_unready_s += step.unready
        self.steady_wait_cpu_s += step.wait_cpu_s
        self.steady_work_cpu_s += step.work_cpu_s

    def _new_window(self) -> None:
        self._window = []
        self._window_s = 0.0

    def resumed(self) -> None:
        """It runs again after others: a window is not made of two segments' steps."""
        self._new_window()

    def remeasure(self) -> None:
        self._new_window()
        self.fresh_from = len(self.rates)

    def add_workers_cpu(self, before: tuple[float, float], after: tuple[float, float]) -> None:
        """Two readings of its workers' CPU (PoolCpu) around steady steps."""
        cpu_s, wall_s = after[0] - before[0], after[1] - before[1]
        if cpu_s >= 0 and wall_s > 0:
            self.workers_cpu_s += cpu_s
            self.workers_wall_s += wall_s

    @property
    def steady_rate(self) -> float | None:
        """Batches/s over its steady steps; None before any. A whole-epoch window's rate also
        holds the epoch's restart (iter(), the refill, a non-persistent pool's opens), which is
        neither a batch's fetch nor what more workers change: read as the workers' rate, a short
        epoch's restart made two workers look no faster than one (predict.py)."""
        if self.steady_steps == 0 or self.steady_s <= 0:
            return None
        return self.steady_steps / self.steady_s

    @property
    def workers_cores(self) -> float | None:
        """The cores its workers kept busy, together, over its steady windows; None unread."""
        return self.workers_cpu_s / self.workers_wall_s if self.workers_wall_s > 0 else None

    @property
    def refused(self) -> bool:
        """Never started: its pool would not have fit (policy.py:_refused). Not a trial."""
        return (self.failed or "").startswith(NOT_RUN)

    @property
    def pieces(self) -> Pieces:
        """Its windows for the one brain (decision/verdict.py)."""
        known = self.at[-len(self.rates) :] if self.rates else []
        at = (None,) * (len(self.rates) - len(known)) + tuple(known) if known else ()
        return Pieces(tuple(self.rates), tuple(self.spans), self.fresh_from, at)

    @property
    def counted(self) -> list[float]:
        """The windows its verdicts and figure count (Pieces.fresh)."""
        return list(self.pieces.fresh)

    @property
    def n(self) -> int:
        return self.pieces.n

    @property
    def mean(self) -> float:
        """Batches/s over the counted windows together (decision/verdict.py)."""
        return self.pieces.mean

    @property
    def shown_mean(self) -> float:
        """The rate a report shows (Pieces.shown_mean): a best is never named without the rate
        it was chosen on."""
        return self.pieces.shown_mean

    def _share(self, wait_s: float, part: int) -> float | None:
        """`wait_s`'s share of its steady steps' time, stalled windows (Pieces.stalled) left out:
        a pause of the whole process is waited through in `__next__` without saying anything of
        the loader. `part`: the wait's place in `_window_waits`."""
        steady_s = self.steady_s
        if len(self._window_waits) == len(self.rates):
            for stalled, window in zip(self.pieces.stalled, self._window_waits, strict=True):
                if stalled:
                    steady_s, wait_s = steady_s - window[0], wait_s - window[part]
        return wait_s / steady_s if steady_s > 0 else None

    @property
    def wait_share(self) -> float | None:
        """The share of its steady steps' time spent waiting inside `__next__`, ready batches'
        hand-overs included."""
        return self._share(self.steady_wait_s, 1)

    @property
    def unready_share(self) -> float | None:
        """The share of its steady steps' time this rank's loop waited for batches not yet made
        (Step.unready): its wait with the hand-overs of ready batches left out."""
        return self._share(self.steady_unready_s, 2)

    @property
    def wait_pct(self) -> float | None:
        share = self.wait_share
        return None if share is None else 100 * share

    @property
    def starved_share(self) -> float | None:
        """The share of its time the most starved rank's loop waits on the loader."""
        return _most(self.wait_share, self.peer_wait_share)

    @property
    def short_share(self) -> float | None:
        """The share of its time the most short rank's loop waits for batches not yet made."""
        return _most(self.unready_share, self.peer_unready_share)

    @property
    def starved(self) -> bool:
        """The loop still waits a real share of its time on the loader (on any rank)."""
        return starved(self.starved_share)

    @property
    def short(self) -> bool:
        """Its loader, not its step, set its rate: the loop waited a real share of its time for
        batches not yet made (`short_share`, on any rank). A pool whose loop waited only for
        hand-overs of ready batches ran at its step's rate, which says nothing of its workers'
        speed."""
        return starved(self.short_share)


def _most(own: float | None, peer: float | None) -> float | None:
    """The larger of this rank's share and the other ranks' most (either may be unknown)."""
    return max((s for s in (own, peer) if s is not None), default=None)


def window_rate(steps: list[Step]) -> tuple[float, float]:
    """Batches/s of a window of consecutive steps, and the seconds it is over. Where the backlog
    was read at both ends, over the span from its first hand-out to its last, by the bursts' rule
    (burst/window.py): the lower of what the loader produced (batches taken plus the backlog's
    change) and what the step could take (batches over the time it did not wait for a batch not
    yet made). A window that drains the buffer a switch's new workers filled is then not read as
    their rate, which it overstates (results/gpu/). Elsewhere, batches over the window's step
    time."""
    first, last = steps[0].backlog, steps[-1].backlog
    if first is None or last is None or len(steps) < 2:
        span = max(sum(s.step_s or 0.0 for s in steps), 1e-12)
        return len(steps) / span, span
    marks: list[Mark] = []
    t = waited = 0.0
    for i, s in enumerate(steps):
        if i:  # a step's wait lies inside its step time, which ends at its hand-out
            t += s.step_s or 0.0
            waited += s.wait_s
        marks.append(next_mark(marks, t, i, s.backlog, waited))
    return span_rate(marks, 0, len(marks) - 1), max(t, 1e-12)
