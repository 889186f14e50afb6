"""What to try next: an optuna study over the valid space, under a wall-clock budget."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.search.options import BurstOptions, TuneOptions
    from autotune.search.result import TuneResult
    from autotune.search.trial import TrialRecord

__getattr__ = exports(
    __name__,
    {
        "BurstOptions": "autotune.search.options",
        "TuneOptions": "autotune.search.options",
        "TuneResult": "autotune.search.result",
        "TrialRecord": "autotune.search.trial",
    },
)
__all__ = ["BurstOptions", "TuneOptions", "TuneResult", "TrialRecord"]
