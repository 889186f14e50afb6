"""Ceilings measured before the search: the step alone and the loader alone."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.probe.ceilings import Ceilings
    from autotune.probe.device import DeviceProbe, device_ceiling
    from autotune.probe.loader import LoaderProbe, loader_rate
    from autotune.probe.run import PROBE_SETTINGS, run_probes

__getattr__ = exports(
    __name__,
    {
        "Ceilings": "autotune.probe.ceilings",
        "DeviceProbe": "autotune.probe.device",
        "device_ceiling": "autotune.probe.device",
        "LoaderProbe": "autotune.probe.loader",
        "loader_rate": "autotune.probe.loader",
        "PROBE_SETTINGS": "autotune.probe.run",
        "run_probes": "autotune.probe.run",
    },
)
__all__ = [
    "Ceilings",
    "DeviceProbe",
    "device_ceiling",
    "LoaderProbe",
    "loader_rate",
    "PROBE_SETTINGS",
    "run_probes",
]
