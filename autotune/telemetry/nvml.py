"""GPU utilization and memory sampled through NVML (the `pynvml` module of nvidia-ml-py).

Where NVML is missing (no driver, no GPU, CPU-only run) the sampler is unavailable and reports
None: GPU utilization is then unknown, never 0%.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from autotune.telemetry.sampler import PeriodicSampler

MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuStats:
    util_mean_pct: float
    util_samples: int
    mem_peak_mib: float
    name: str


def load_nvml() -> ModuleType | None:
    """The initialised pynvml module, or None where NVML cannot be used on this machine."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError subclasses: no driver, no library, no permission
        return None
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def list_gpus(nvml: ModuleType | None = None) -> list[dict[str, Any]]:
    """GPUs NVML sees: index, name, total memory. Empty where NVML is unavailable."""
    nvml = nvml if nvml is not None else load_nvml()
    if nvml is None:
        return []
    gpus = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        gpus.append(
            {
                "index": index,
                "name": _text(nvml.nvmlDeviceGetName(handle)),
                "memory_total_mib": round(memory.total / MIB),
            }
        )
    return gpus


def handle_for_torch_device(nvml: ModuleType, device_index: int) -> Any:
    """NVML handle of torch's cuda:<index>, which CUDA_VISIBLE_DEVICES may renumber: match by
    UUID."""
    try:
        import torch

        uuid = str(torch.cuda.get_device_properties(device_index).uuid)
        return nvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except Exception:
        return nvml.nvmlDeviceGetHandleByIndex(device_index)


class NvmlSampler(PeriodicSampler):
    interval_s = 0.05  # NVML's own utilization period is 1/6 s to 1 s; sample faster than that

    def __init__(self, handle: Any, nvml: ModuleType):
        super().__init__()
        self.nvml = nvml
        self.handle = handle
        self.name = _text(nvml.nvmlDeviceGetName(handle))
        self.util: list[float] = []
        self.mem_peak = 0

    @classmethod
    def for_device(cls, device_index: int, nvml: ModuleType | None = None) -> NvmlSampler | None:
        nvml = nvml if nvml is not None else load_nvml()
        if nvml is None:
            return None
        try:
            return cls(handle_for_torch_device(nvml, device_index), nvml)
        except Exception:
            return None

    def sample(self) -> None:
        try:
            rates = self.nvml.nvmlDeviceGetUtilizationRates(self.handle)
            memory = self.nvml.nvmlDeviceGetMemoryInfo(self.handle)
        except Exception:
            return
        self.util.append(float(rates.gpu))
        self.mem_peak = max(self.mem_peak, int(memory.used))

    def start(self) -> None:
        self.util.clear()
        self.mem_peak = 0
        super().start()

    def stop(self) -> GpuStats | None:
        self.halt()
        if not self.util:
            return None
        return GpuStats(
            util_mean_pct=sum(self.util) / len(self.util),
            util_samples=len(self.util),
            mem_peak_mib=self.mem_peak / MIB,
            name=self.name,
        )
