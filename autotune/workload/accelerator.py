"""Emulated accelerators: a step that stands in for a device by sleeping, and counts its busy time.

Sleeping frees the host CPU the way a GPU kernel does, so the loader competes for the cores exactly
as it would beside a real device. The busy time is known by construction: it is the emulated
device's utilization, the figure NVML would give for a real GPU.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from autotune.transfer.move import batch_samples
from autotune.workload.base import Workload


def sleep_until(deadline: float) -> None:
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


class EmulatedAccelerator:
    """Base: `device_seconds(batch)` of device work per batch, run synchronously by `__call__`."""

    def __init__(self) -> None:
        self.busy_s = 0.0  # device seconds consumed so far; the burst reads the window's share

    def device_seconds(self, batch: Any) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def __call__(self, batch: Any) -> None:
        seconds = self.device_seconds(batch)
        sleep_until(time.perf_counter() + seconds)
        self.busy_s += seconds


class SimulatedAccelerator(EmulatedAccelerator):
    """A device that consumes `samples_per_s` samples per second: the what-if of `--target-rate`."""

    def __init__(self, samples_per_s: float, batch_size: int):
        super().__init__()
        self.samples_per_s = samples_per_s
        self.batch_size = batch_size

    def device_seconds(self, batch: Any) -> float:
        return batch_samples(batch, self.batch_size) / self.samples_per_s


def with_target_rate(workload: Workload, samples_per_s: float) -> Workload:
    """The workload with its step replaced by a simulated accelerator of that rate."""
    details = {**workload.details, "target_rate_samples_per_s": samples_per_s}
    return dataclasses.replace(
        workload,
        step=SimulatedAccelerator(samples_per_s, workload.batch_size),
        name=f"{workload.name}@{samples_per_s:g}/s",
        details=details,
    )
