"""Where the numbers come from: step phase clocks, NVML, host CPU and memory."""

from autotune.telemetry.host import HostSampler, HostStats
from autotune.telemetry.nvml import GpuStats, NvmlSampler
from autotune.telemetry.phases import PhaseClock

__all__ = ["HostSampler", "HostStats", "GpuStats", "NvmlSampler", "PhaseClock"]
