"""Why the pipeline is as fast as it is: the step-time split, a verdict and what to do about it."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.diagnosis.diagnose import Diagnosis, diagnose, explain
    from autotune.diagnosis.evidence import Context, KnownCeilings
    from autotune.diagnosis.split import StepSplit, split_step

__getattr__ = exports(
    __name__,
    {
        "Diagnosis": "autotune.diagnosis.diagnose",
        "diagnose": "autotune.diagnosis.diagnose",
        "explain": "autotune.diagnosis.diagnose",
        "Context": "autotune.diagnosis.evidence",
        "KnownCeilings": "autotune.diagnosis.evidence",
        "StepSplit": "autotune.diagnosis.split",
        "split_step": "autotune.diagnosis.split",
    },
)
__all__ = [
    "Diagnosis",
    "diagnose",
    "explain",
    "Context",
    "KnownCeilings",
    "StepSplit",
    "split_step",
]
