"""The tuning's clock: how much of the wall-clock budget is left, and whether another burst fits.

Pure arithmetic over a clock and the durations of the bursts so far, so that a test can drive it
with a fake clock. The budget covers everything from the tuner's start: the probe batch, the
study set-up, the probes, the search and the re-measurements, except the device's one-time
warm-up (`exclude`): on a cold GPU, CUDA and cuDNN loading and autotuning can take half of a
default budget before the first trial (results/gpu/), leaving time for PyTorch's defaults alone.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from autotune.search.confirm import FASTEST, reserved_bursts
from autotune.search.trial import TrialRecord

# At most this share of the budget is held back from the search for the re-measurements.
CONFIRM_SHARE = 0.3
# Another burst (or probe) starts only if this many times the longest one so far still fits:
# on a busy machine the same configuration can take half as long again.
SAFETY = 1.5
# A window may take this share of what is left; its settle phase may take half the window's cap
# again (pacing.settle, then placing the window in its epoch), and start-up and warm-up come on top.
WINDOW_SHARE = 0.8
SETTLE_FACTOR = 1.5


@dataclass
class Budget:
    budget_s: float
    clock: Callable[[], float] = time.perf_counter
    durations: list[float] = field(default_factory=list)  # of every burst so far
    excluded_s: float = 0.0  # one-time warm-up that does not count against the budget
    held_s: float = 0.0  # kept back for what runs after the search (the stage profile)
    t0: float = field(init=False)

    def __post_init__(self) -> None:
        self.t0 = self.clock()

    def count(self, trials: Iterable[TrialRecord]) -> None:
        """Add the bursts of `trials` (skipped ones ran none)."""
        self.durations.extend(t.result.duration_s for t in trials if t.result is not None)

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def exclude(self, seconds: float) -> None:
        """Leave `seconds` (the device's one-time warm-up) out of the budget."""
        self.excluded_s += max(0.0, seconds)

    def hold(self, seconds: float) -> None:
        """Keep `seconds` back from the probes, the search and the re-measurements."""
        self.held_s = max(0.0, seconds)

    def release_hold(self) -> None:
        self.held_s = 0.0

    def time_left(self) -> float:
        return self.budget_s + self.excluded_s - self.held_s - self.elapsed()

    def more_than_half_left(self) -> bool:
        return self.time_left() > self.budget_s / 2

    def next_burst_estimate(self) -> float:
        """What the next burst will probably cost: for planning."""
        return statistics.median(self.durations or [0.0])

    def fits(self, estimate_s: float) -> bool:
        """Whether something that took `estimate_s` once still ends within the budget."""
        return self.time_left() >= SAFETY * estimate_s

    def longest(self) -> float:
        return max(self.durations or [0.0])

    def fits_another(self, then: int = 0, after_s: float = 0.0) -> bool:
        """Whether even a slow burst still ends within the budget, and `then` typical bursts
        after it, and something that took `after_s` once (with its margin): for honouring it."""
        return (
            self.time_left()
            >= SAFETY * self.longest() + then * self.next_burst_estimate() + SAFETY * after_s
        )

    def record_reserve(self, bursts: int = 1) -> float:
        """Kept for the record of the chosen configuration: the recipe's rate must be measured
        after the choice, not selected by it (the winner's curse: results/bench/deep-storage-noise).
        The first burst always runs; `bursts` is how many the noise measured so far calls for
        (record.bursts_needed), since one burst at a high noise can sit far from the steady rate.
        Each is a slow burst, with its full window, the first with its margin."""
        return SAFETY * self.longest() + (max(1, bursts) - 1) * self.longest()

    def fits_before_record(self, record_bursts: int = 1) -> bool:
        """Room for one more re-measurement, even a slow one, with the record's reserve left."""
        return self.time_left() >= SAFETY * self.longest() + self.record_reserve(record_bursts)

    def confirm_reserve(self) -> float:
        # Never less than the first round's two fastest and the first record burst: where bursts
        # are slow, a fixed share of the budget fits a single re-measurement, and a choice resting
        # on it can verify well below what the recipe recorded.
        floor = (
            FASTEST * self.next_burst_estimate()
            + (SAFETY - 1) * self.longest()
            + self.record_reserve()
        )
        return max(
            floor,
            min(CONFIRM_SHARE * self.budget_s, reserved_bursts() * self.next_burst_estimate()),
        )

    def search_fits(self) -> bool:
        """Room for one more search burst, with the re-measurements' reserve left over."""
        return (
            self.fits_another()
            and self.time_left() >= self.next_burst_estimate() + self.confirm_reserve()
        )

    def window_cap(self, min_seconds: float) -> float:
        """The longest measuring window a burst may get now: it may not outlast the budget."""
        return max(min_seconds, self.time_left() * WINDOW_SHARE / SETTLE_FACTOR)
