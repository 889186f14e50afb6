"""Where the training's length is known: whether one more configuration to measure can repay
what it costs in the steps the run has left.

What a better loader can save is bounded by the time the loop waits on the best so far: a loader
that never keeps the loop waiting saves that wait at every step after the candidate is measured.
A best that hardly waits is credited the least difference the search resolves (TARGET): its
candidates (fewer workers, pin_memory, the winner's-curse re-measurement) gain little time, but
may on a run long enough to repay them.
What a candidate surely costs is its pool's start-up, and the best's again where it loses. The
steps spent measuring it are not counted as a gain: a 160-step run whose candidate needs 25 steps
to be judged has 135 left to profit from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.decision.thresholds import TARGET


@dataclass(frozen=True)
class Remaining:
    total_steps: int  # the training's length
    steps_done: int  # steps run so far

    @property
    def left(self) -> int:
        return max(0, self.total_steps - self.steps_done)

    def repays(
        self,
        measure_steps: int,
        best_step_s: float,
        best_wait_share: float | None,
        startup_s: float | None,
    ) -> bool:
        """Whether a candidate judged after `measure_steps` steps can still gain more than its
        start-ups cost: `best_wait_share` of the best's step (`best_step_s`) over the steps left
        after it is judged, against two start-ups of `startup_s` (unknown: none measured yet, as
        before the first pool starts; then only the steps left decide)."""
        after = self.left - measure_steps
        if after <= 0:
            return False
        gain_s = max(best_wait_share or 0.0, TARGET) * best_step_s * after
        return gain_s > 2 * (startup_s or 0.0)
