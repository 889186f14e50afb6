"""What to try next: an optuna study over the valid space, under a wall-clock budget."""

from autotune.search.options import BurstOptions, TuneOptions
from autotune.search.trial import TrialRecord
from autotune.search.tuner import TuneResult, tune

__all__ = ["BurstOptions", "TuneOptions", "Trial", "TuneResult", "tune"]
