"""Where the step time goes: waiting for data, host->device copy, device compute, other.

The four shares add up to the step. Wall-clock phase times say where the host thread was; device
busy time, where known, separates the device's work from host work inside `step()`:
- an emulated accelerator (simulated workloads, --target-rate) knows its busy time exactly;
- on a GPU, NVML utilization is the share of time a kernel ran;
- on a CPU-only run the model step runs on the host: its wall time is the compute.
The rest of the step, host work outside the phases, is "other": Python and launch overhead.
On a CPU-only run no host->device copy happens, so its copy share is None, not 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.burst.result import BurstResult

PARTS = ("wait", "copy", "compute", "other")


@dataclass(frozen=True)
class StepSplit:
    step_ms: float
    wait_pct: float
    copy_pct: float | None  # None: no copy to a device happened (CPU-only run)
    compute_pct: float
    other_pct: float
    compute_basis: str  # how device work was told apart from host work in step()

    def pcts(self) -> dict[str, float | None]:
        return {
            "wait": self.wait_pct,
            "copy": self.copy_pct,
            "compute": self.compute_pct,
            "other": self.other_pct,
        }

    def ms(self) -> dict[str, float | None]:
        return {k: None if v is None else v * self.step_ms / 100 for k, v in self.pcts().items()}


def device_busy_pct(result: BurstResult) -> tuple[float | None, str]:
    """Share of the window the device was busy, and where that figure comes from."""
    if result.device_busy_s is not None:
        return 100 * result.device_busy_s / max(
            result.window_s, 1e-12
        ), "the emulated device's busy time"
    if result.gpu is not None:
        return result.gpu.util_mean_pct, "NVML GPU utilization"
    return None, "the step's wall time, as on a CPU run the host is the device"


def split_step(result: BurstResult) -> StepSplit:
    window = max(result.window_s, 1e-12)
    wait = 100 * result.wait_s / window
    copy: float | None = None
    queued = 0.0
    if result.transfers:
        copy_wall = 100 * result.copy_s / window
        copy = min(copy_wall, 100 * (result.device_copy_s or 0.0) / window)
        # A synchronous copy waits for the previous step's kernels first: that wait is compute.
        queued = copy_wall - copy
    in_step = 100 * result.compute_s / window + queued
    busy, basis = device_busy_pct(result)
    compute = in_step if busy is None else min(in_step, busy)
    other = max(0.0, 100.0 - wait - (copy or 0.0) - compute)
    return StepSplit(
        step_ms=1000 * result.step_s,
        wait_pct=wait,
        copy_pct=copy,
        compute_pct=compute,
        other_pct=other,
        compute_basis=basis,
    )
