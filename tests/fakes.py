"""Fakes at the boundaries the CPU cannot reach: burst results with GPU-only evidence, an NVTX
module."""

from __future__ import annotations

from autotune.burst.result import BurstResult
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostStats
from autotune.telemetry.nvml import GpuStats


def burst(
    *,
    window=1.0,
    steps=100,
    wait=0.0,
    copy=0.0,
    compute=0.0,
    device_copy=None,
    device_compute=None,
    gpu_util=None,
    busy=None,
    cpu_pct=50.0,
    system_cpu_pct=None,
    config=LoaderConfig(num_workers=4, prefetch_factor=2),
    rate=None,
) -> BurstResult:
    """A BurstResult with the given phase seconds; GPU figures only where given (fake CUDA)."""
    host = HostStats(
        cpu_pct=cpu_pct,
        cpu_cores_used=cpu_pct / 50,
        peak_rss_mib=100.0,
        peak_pss_mib=80.0,
        peak_workers=config.num_workers,
        system_cpu_pct=system_cpu_pct,
    )
    gpu = None if gpu_util is None else GpuStats(gpu_util, 20, 1000.0, "Fake GPU")
    return BurstResult(
        config=config,
        samples_per_s=rate if rate is not None else 16 * steps / window,
        steps=steps,
        samples=16 * steps,
        window_s=window,
        startup_s=0.1,
        warmup_s=0.1,
        duration_s=window + 0.3,
        steady=True,
        wait_s=wait,
        copy_s=copy,
        compute_s=compute,
        device_copy_s=device_copy,
        device_compute_s=device_compute,
        host=host,
        gpu=gpu,
        device_busy_s=busy,
    )


class FakeNvtx:
    """Records range_push/range_pop calls as torch.cuda.nvtx would emit them."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str | None]] = []
        self.depth = 0

    def range_push(self, name: str) -> int:
        self.events.append(("push", name))
        self.depth += 1
        return self.depth

    def range_pop(self) -> int:
        self.events.append(("pop", None))
        self.depth -= 1
        return self.depth

    def pushed(self) -> list[str]:
        return [name for kind, name in self.events if kind == "push"]
