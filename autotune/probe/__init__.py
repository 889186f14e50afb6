"""Ceilings measured before the search: the step alone and the loader alone."""

from autotune.probe.ceilings import Ceilings
from autotune.probe.device import DeviceProbe, device_ceiling
from autotune.probe.loader import LoaderProbe, loader_rate
from autotune.probe.run import PROBE_SETTINGS, run_probes

__all__ = [
    "Ceilings",
    "DeviceProbe",
    "LoaderProbe",
    "PROBE_SETTINGS",
    "device_ceiling",
    "loader_rate",
    "run_probes",
]
