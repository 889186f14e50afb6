"""Where the numbers come from: step phase clocks, NVML, host CPU and memory."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.telemetry.host import HostSampler, HostStats
    from autotune.telemetry.nvml import GpuStats, NvmlSampler
    from autotune.telemetry.phases import PhaseClock

__getattr__ = exports(
    __name__,
    {
        "HostSampler": "autotune.telemetry.host",
        "HostStats": "autotune.telemetry.host",
        "GpuStats": "autotune.telemetry.nvml",
        "NvmlSampler": "autotune.telemetry.nvml",
        "PhaseClock": "autotune.telemetry.phases",
    },
)
__all__ = ["HostSampler", "HostStats", "GpuStats", "NvmlSampler", "PhaseClock"]
