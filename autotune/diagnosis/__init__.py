"""Why the pipeline is as fast as it is: the step-time split, a verdict and what to do about it."""

from autotune.diagnosis.diagnose import Diagnosis, diagnose, explain
from autotune.diagnosis.evidence import Context, KnownCeilings
from autotune.diagnosis.split import StepSplit, split_step

__all__ = [
    "Context",
    "Diagnosis",
    "KnownCeilings",
    "StepSplit",
    "diagnose",
    "explain",
    "split_step",
]
