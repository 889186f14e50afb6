"""One burst in, one diagnosis out: the split, the verdict with its evidence, and (for the tuned
configuration) the recommendations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from autotune.burst.result import BurstResult
from autotune.diagnosis.advice import recommend
from autotune.diagnosis.epochs import depth_advice, epoch_advice, of_burst
from autotune.diagnosis.evidence import Context, gather
from autotune.diagnosis.measured import MeasuredConfig
from autotune.diagnosis.verdict import Verdict, decide, reason


@dataclass(frozen=True)
class Diagnosis:
    verdict: Verdict
    recommendations: list[str] = field(default_factory=list)
    stages: dict[str, Any] | None = None  # the stage table's record, where the stages were timed

    @property
    def bottleneck(self) -> str:
        return self.verdict.bottleneck

    @property
    def reason(self) -> str:
        return reason(self.verdict)

    def to_record(self) -> dict[str, Any]:
        """The recipe's `diagnosis` block."""
        evidence = {
            "reason": self.reason,
            **self.verdict.evidence.as_dict(),
            "runner_up": self.verdict.runner_up,
        }
        record = {
            "bottleneck": self.bottleneck,
            "evidence": evidence,
            "recommendations": list(self.recommendations),
        }
        return record if self.stages is None else {**record, "stages": self.stages}


def diagnose(result: BurstResult, context: Context) -> Diagnosis:
    """The verdict on one burst, without recommendations (those need the other trials)."""
    return Diagnosis(decide(gather(result, context)))


def explain(result: BurstResult, trials: Sequence[MeasuredConfig], context: Context) -> Diagnosis:
    """The verdict on one burst with recommendations drawn from all the trials."""
    verdict = decide(gather(result, context))
    advice = (
        recommend(verdict, trials, context)
        + epoch_advice(result, trials)
        + depth_advice(of_burst(result), trials)
    )
    return Diagnosis(verdict, advice)
