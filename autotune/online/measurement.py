"""One configuration's measurement in the training loop: windows of its steady steps, and where
their time went (the step's own work, the wait inside `__next__`, the CPU of each)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from autotune.online.meter import Step
from autotune.space.config import LoaderConfig

# A loop that waits on the loader this share of its steady time or more is still starved: more
# workers or a deeper prefetch may feed it. Below it, the wait is the hand-over of a ready batch.
WAITS_SHARE = 0.05


@dataclass
class Measurement:
    config: LoaderConfig
    rates: list[float] = field(default_factory=list)  # batches/s of each window
    startup_s: float | None = None  # iter() of its inner loader to its first batch
    steps: int = 0  # every step it ran, warm-up included
    # The steady steps: their count, time, the wait inside it, and the CPU of both parts.
    steady_steps: int = 0
    steady_s: float = 0.0
    steady_wait_s: float = 0.0
    steady_wait_cpu_s: float = 0.0  # the main thread's, inside __next__
    steady_work_cpu_s: float = 0.0  # the process's, in the loop's own work
    # Windows before this index are left out of the mean: it was re-measured after being chosen,
    # and the windows that made it look best were selected for being high (the winner's curse).
    fresh_from: int = 0
    _window: list[float] = field(default_factory=list)

    def add(self, step: Step, window_steps: int) -> bool:
        """One steady step; True when it completed a window."""
        assert step.step_s is not None
        self.steady_steps += 1
        self.steady_s += step.step_s
        self.steady_wait_s += step.wait_s
        self.steady_wait_cpu_s += step.wait_cpu_s
        self.steady_work_cpu_s += step.work_cpu_s
        self._window.append(step.step_s)
        if len(self._window) < window_steps:
            return False
        self.rates.append(len(self._window) / max(sum(self._window), 1e-12))
        self._window = []
        return True

    def resumed(self) -> None:
        """It runs again after others: a window is not made of two segments' steps."""
        self._window = []

    def remeasure(self) -> None:
        self._window = []
        self.fresh_from = len(self.rates)

    @property
    def counted(self) -> list[float]:
        return self.rates[self.fresh_from:]

    @property
    def n(self) -> int:
        return len(self.counted)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.counted) if self.counted else 0.0

    @property
    def wait_share(self) -> float | None:
        return self.steady_wait_s / self.steady_s if self.steady_s > 0 else None

    @property
    def wait_pct(self) -> float | None:
        share = self.wait_share
        return None if share is None else 100 * share

    @property
    def starved(self) -> bool:
        """The loop still waits a real share of its time on the loader."""
        share = self.wait_share
        return share is not None and share >= WAITS_SHARE
