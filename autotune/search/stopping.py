"""When the search phase has seen enough: after the seeds, the device ceiling is reached, or
nothing improves."""

from __future__ import annotations

from dataclasses import dataclass

from autotune.decision.thresholds import TARGET
from autotune.search.trial import TrialRecord

# "Within a few percent of the device ceiling": a burst carries per-step costs the device probe
# does not (the loader's hand-over, the telemetry thread), so it lands a few percent short of it
# even when the loader keeps up. A narrower gap would keep a compute-bound search, whose bursts
# sit just under the ceiling, running on into deeper and dearer pools.
CEILING_GAP = 0.05
# Measured trials after the seeds without a gain. The seeds already sit where the probes put the
# answer, so a run of three misses beyond them means the best region is found (each extra one
# costs a burst of the budget). A gain smaller than what the
# choice treats as equal (a lucky burst, mostly) does not count.
PATIENCE = 3
MIN_GAIN = TARGET


@dataclass
class StopRules:
    device_ceiling: float
    seeds: int  # enqueued trials (defaults and probe seeds): patience starts after them
    patience: int = PATIENCE
    best: float = 0.0
    measured: int = 0
    since_gain: int = 0

    def update(self, trial: TrialRecord) -> None:
        self.measured += 1
        rate = trial.samples_per_s if trial.ok else None
        if rate is not None and rate > self.best * (1 + MIN_GAIN):
            self.best = rate
            self.since_gain = 0
        else:
            self.best = max(self.best, rate or 0.0)
            if self.measured > self.seeds:
                self.since_gain += 1

    def restart(self, seeds: int) -> None:
        """New seeds were enqueued (the worker range grew, or the best's persistent twin): they
        run before patience counts. Seeds still queued from before then lose that protection:
        a twin is enqueued only for the best so far, and seeds run cheapest first, so they are
        dearer than it, and a stop at the device ceiling may leave them out."""
        self.seeds = self.measured + seeds
        self.since_gain = 0

    def reason(self) -> str | None:
        # The seeds run before any stop: they are the prediction's neighbourhood, and the cheaper
        # of them may equal a faster one within noise (the choice needs them measured to pick it).
        if self.measured < self.seeds:
            return None
        if self.device_ceiling > 0 and self.best >= (1 - CEILING_GAP) * self.device_ceiling:
            return "reached the device ceiling"
        if self.since_gain >= self.patience:
            return f"no gain in {self.since_gain} trials"
        return None
