"""The device ceiling: the workload's step fed one batch, already on the device, over and over.

No loader runs at all, so no loader setting can beat this rate. The host CPU the step itself uses
is measured too: on a CPU device it is the core the training takes away from the workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from autotune.transfer.move import batch_samples, move_to_device
from autotune.workload.base import Workload

# A GPU's clocks and queues need longer than a CPU step to settle: windows of a fraction of a second
# scatter too widely across runs to rank a knob such as channels_last (results/gpu/).
CUDA_MIN_SECONDS = 1.0


@dataclass(frozen=True)
class DeviceProbe:
    samples_per_s: float
    channels_last: bool
    steps: int
    window_s: float
    host_cores: float  # CPU time of the main process per second of stepping
    warmup_s: float = 0.0  # the warm-up steps: on a cold GPU, CUDA/cuDNN loading and autotuning


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_ceiling(
    workload: Workload,
    batch: Any,
    device: torch.device,
    *,
    min_seconds: float,
    min_steps: int,
    warmup_steps: int,
    channels_last: bool = False,
) -> DeviceProbe:
    on_device = move_to_device(batch, device, channels_last=channels_last)
    samples = batch_samples(on_device, workload.batch_size)
    if device.type == "cuda":
        min_seconds = max(min_seconds, CUDA_MIN_SECONDS)
    warm0 = time.perf_counter()
    for _ in range(warmup_steps):  # allocator, cudnn autotuning, the model's layout switch
        workload.step(on_device)
    _synchronize(device)
    warmup_s = time.perf_counter() - warm0
    steps = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    while True:
        workload.step(on_device)
        steps += 1
        if steps >= min_steps and time.perf_counter() - t0 >= min_seconds:
            break
    _synchronize(device)
    window = time.perf_counter() - t0
    return DeviceProbe(
        samples_per_s=steps * samples / window,
        channels_last=channels_last,
        steps=steps,
        window_s=window,
        host_cores=(time.process_time() - cpu0) / window,
        warmup_s=warmup_s,
    )
