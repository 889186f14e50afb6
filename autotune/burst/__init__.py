"""How one configuration is run and measured: a short, profiled training burst."""

from autotune.burst.result import BurstResult
from autotune.burst.runner import BurstSettings, run_burst

__all__ = ["BurstResult", "BurstSettings", "run_burst"]
