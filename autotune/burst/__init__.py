"""How one configuration is run and measured: a short, profiled training burst."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.burst.result import BurstResult
    from autotune.burst.runner import BurstSettings, run_burst

__getattr__ = exports(
    __name__,
    {
        "BurstResult": "autotune.burst.result",
        "BurstSettings": "autotune.burst.runner",
        "run_burst": "autotune.burst.runner",
    },
)
__all__ = ["BurstResult", "BurstSettings", "run_burst"]
