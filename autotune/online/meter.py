"""The training loop's own measurements, taken at the loader's `__next__`.

- step: the time between two consecutive batches handed out (the loop's whole step, as it runs);
- wait: the time spent inside `__next__` (the loop blocked on the loader);
- CPU: the process's CPU time inside `__next__` (at num_workers=0 the fetch runs there: its CPU
  share tells computing from waiting on storage; the process's, not the main thread's, because a
  fetch of torch ops runs on torch's intra-op threads in the main process and on one thread in a
  worker) and in the loop's own work between two calls (the cores the step keeps busy);
- backlog: where the caller can read it, the batches the workers finished that the loop has not
  taken yet, just after this one was handed out (burst/backlog.py): a window's rate is then what
  the loader produced, not the buffer it drained, and a wait that began on a ready batch is its
  hand-over, not a wait for the loader (unready: burst/window.py's `PullWaits`);
- start-up: a switch's cost, from retiring the old inner loader to the first batch of the new one.
  It lies inside that `__next__` call, so it is also in that step's wait and step time: the
  exploration pays for it like any other slow step.

The clocks are injected (tests drive fake ones).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from autotune.burst.window import PullWaits

Clock = Callable[[], float]


@dataclass(frozen=True)
class Step:
    """One batch handed out."""

    index: int  # batches handed out before this one, over the loader's life
    step_s: float | None  # since the previous batch was handed out; None for the first
    wait_s: float  # inside __next__
    segment_step: int  # batches of this configuration handed out before this one
    startup_s: float | None  # set on a segment's first batch: its start-up after a switch
    wait_cpu_s: float = 0.0  # the process's CPU time inside __next__
    work_cpu_s: float = 0.0  # the process's CPU time in the loop's own work before this call
    backlog: int | None = None  # finished batches not yet taken, after this one; None: unknown
    epoch_step: int | None = None  # batches of this epoch handed out before this one; None: unknown
    # The part of wait_s spent on a batch not yet made (burst/window.py: PullWaits); None:
    # unknown, all of it.
    unready_s: float | None = None

    @property
    def unready(self) -> float:
        """Seconds of its wait the loop waited for a batch not yet made, its hand-over left out."""
        return self.wait_s if self.unready_s is None else self.unready_s


class Meter:
    def __init__(self, clock: Clock = time.perf_counter, process_cpu: Clock = time.process_time):
        self.clock = clock
        self.process_cpu = process_cpu
        self._entered: float | None = None
        self._entered_cpu = 0.0  # process CPU at enter()
        self._work_cpu = 0.0  # process CPU of the loop's work before enter()
        self._out_cpu: float | None = None  # process CPU when the last batch was handed out
        self._last_out: float | None = None
        self._switched_at: float | None = None
        self._segment_step = 0
        self._epoch_step = 0
        self._pulls = PullWaits()
        self.count = 0
        self.wait_s = 0.0
        self.startup_s = 0.0  # every switch's start-up

    def enter(self) -> None:
        self._entered = self.clock()
        self._entered_cpu = self.process_cpu()
        self._work_cpu = 0.0 if self._out_cpu is None else self._entered_cpu - self._out_cpu

    def switching(self, new_pool: bool = True) -> None:
        """A new configuration starts inside this call (the old inner loader retires now);
        `new_pool` False: the running pool takes it in place (a new prefetch depth), and there is
        no start-up to time."""
        self._switched_at = self.clock() if new_pool else None
        self._segment_step = 0
        if new_pool:
            self._pulls.new_pool()

    def handed_out(self, backlog: int | None = None) -> Step:
        now = self.clock()
        out_cpu = self.process_cpu()
        assert self._entered is not None, "enter() first"
        wait = now - self._entered
        startup = None if self._switched_at is None else now - self._switched_at
        step = Step(
            self.count,
            None if self._last_out is None else now - self._last_out,
            wait,
            self._segment_step,
            startup,
            out_cpu - self._entered_cpu,
            self._work_cpu,
            backlog,
            self._epoch_step,
            self._pulls.unready(wait, backlog),
        )
        self._out_cpu = out_cpu
        if startup is not None:
            self.startup_s += startup
        self.wait_s += wait
        self.count += 1
        self._segment_step += 1
        self._epoch_step += 1
        self._last_out, self._switched_at, self._entered = now, None, None
        return step

    def epoch_ended(self) -> None:
        """The time until the next epoch's first batch (evaluation, checkpoints) is no step."""
        self._last_out = None
        self._entered = None
        self._out_cpu = None
        self._epoch_step = 0
        self._pulls.new_epoch()


# The loader's first batches, paid with or without tuning: the first one's wait is the starting
# pool's start-up, which the script pays as it stands, and the second one's step holds the
# script's first training step, with its one-time warm-up (cudnn's autotuning, lazy
# initialisation, the allocator's first growth), which no loader configuration shortens.
RUN_START_STEPS = 2


@dataclass
class Ledger:
    """Where the loop's time went: the steps while exploring (switch start-ups included) and
    those after it; `start_s`, the part of the exploring time that the run's start would have
    taken under any configuration (RUN_START_STEPS)."""

    explore_steps: int = 0
    explore_s: float = 0.0
    tuned_steps: int = 0
    tuned_s: float = 0.0
    start_steps: int = 0
    start_s: float = 0.0
    explored_to: int = 0  # the step after the last one explored (exploring may resume)

    def add(self, step: Step, exploring: bool) -> None:
        seconds = step.wait_s if step.step_s is None else step.step_s
        if exploring:
            self.explore_steps += 1
            self.explored_to = step.index + 1
            self.explore_s += seconds
            if step.index < RUN_START_STEPS:
                self.start_steps += 1
                self.start_s += seconds
        else:
            self.tuned_steps += 1
            self.tuned_s += seconds

    def cost_s(self, best_step_s: float | None) -> float:
        """Time lost while exploring against running the best configuration all along: the
        exploring steps' time less what the best takes for as many steps, the run's start left
        out on both sides (the best pays it too)."""
        if best_step_s is None or not self.explore_steps:
            return 0.0
        steps = self.explore_steps - self.start_steps
        return max(0.0, self.explore_s - self.start_s - steps * best_step_s)
