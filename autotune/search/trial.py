"""One tried configuration and what became of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autotune.burst.result import BurstResult
from autotune.decision.epoch_time import EpochParts
from autotune.space.config import LoaderConfig
from autotune.strenum import StrEnum

if TYPE_CHECKING:
    from autotune.diagnosis.diagnose import Diagnosis


class TrialStatus(StrEnum):
    """What became of a tried configuration (str-valued: stored in studies and JSON as is)."""

    OK = "ok"
    FAILED = "failed"
    PRUNED = "pruned"
    REJECTED = "rejected"  # measured over the RAM budget
    SKIPPED = "skipped"  # not run: its estimated memory could not fit (search/guard.py)


class Phase(StrEnum):
    """Why a configuration was measured."""

    SEARCH = "search"  # proposed by the search
    CONFIRM = "confirm"  # re-measured to choose among the best
    # Measured once more after the choice, for the recipe's rate alone: the bursts that chose a
    # configuration were selected for being high (the winner's curse), this one was not.
    RECORD = "record"
    GRID = "grid"  # a point of the bench's exhaustive grid


@dataclass
class TrialRecord:
    number: int
    config: LoaderConfig
    status: TrialStatus
    result: BurstResult | None = None
    error: str | None = None  # one line: why it failed, was skipped, pruned or rejected
    traceback: str | None = None  # the whole failure, for the run folder's failures file
    phase: Phase = Phase.SEARCH
    origin: dict[str, Any] | None = None  # where it was measured: node, GPU, Slurm job, CPU budget
    diagnosis: Diagnosis | None = None
    finished_s: float | None = None  # seconds from the start of tuning to the end of this trial

    @property
    def measured(self) -> bool:
        """A burst ran (and took time), whether it succeeded or failed."""
        return self.status != TrialStatus.SKIPPED

    @property
    def ok(self) -> bool:
        return self.status == TrialStatus.OK and self.result is not None

    @property
    def samples_per_s(self) -> float | None:
        return self.result.samples_per_s if self.result else None

    @property
    def burst(self) -> BurstResult:
        """The burst of a trial that ran (`ok` ones all have one), for code that has checked."""
        if self.result is None:
            raise ValueError(f"trial {self.number} ({self.status}) has no burst result")
        return self.result

    @property
    def rate(self) -> float:
        """samples/s of a trial that ran (see `burst`)."""
        return self.burst.samples_per_s

    @property
    def epoch_parts(self) -> EpochParts | None:
        """Its steady rate and restarts for the epoch model (decision/epoch_time.py)."""
        return self.result.epoch_parts if self.result else None

    @property
    def span_s(self) -> float | None:
        """The seconds its rate was measured over (the burst's timed window)."""
        return self.result.window_s if self.result else None


def trial_counts(trials: list[TrialRecord]) -> dict[str, int]:
    """How many search trials were measured (skipped ones ran no burst), how many bursts
    re-measured the best few, how many recorded the chosen one's rate, and how many were pruned
    or rejected."""
    return {
        "trials": sum(1 for t in trials if t.phase == Phase.SEARCH and t.measured),
        "remeasured": sum(1 for t in trials if t.phase == Phase.CONFIRM and t.measured),
        "recorded": sum(1 for t in trials if t.phase == Phase.RECORD and t.measured),
        "pruned": sum(1 for t in trials if t.status == TrialStatus.PRUNED),
        "rejected": sum(1 for t in trials if t.status == TrialStatus.REJECTED),
    }
