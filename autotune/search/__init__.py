"""What to try next: an optuna study over the valid space, under a wall-clock budget."""

from autotune.search.options import BurstOptions, TuneOptions
from autotune.search.result import TuneResult
from autotune.search.trial import TrialRecord

__all__ = ["BurstOptions", "TrialRecord", "TuneOptions", "TuneResult"]
