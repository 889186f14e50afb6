"""The CUDA paths on a real GPU: pinned copies, the side stream's overlap, CUDA-event phase times,
NVML readings, channels-last reaching the model and the device ceiling probe.

Every test here is marked `gpu` and skips where no CUDA device is present (CI, the dev machine);
the fakes in test_transfer.py and test_telemetry*.py cover the same logic without one. Results
of a run on a GPU are committed under results/gpu/.
"""

from __future__ import annotations

import time

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def _busy(seconds: float, size: int = 4096) -> None:
    """Keep the GPU computing for about `seconds` (enqueued asynchronously, then waited for)."""
    a = torch.randn(size, size, device="cuda")
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(8):
            a = torch.tanh(a @ a)
        torch.cuda.synchronize()


def test_pinned_batches_reach_the_device_intact():
    from torch.utils.data import DataLoader, TensorDataset

    from autotune.transfer.device_loader import DeviceLoader

    data = torch.arange(64 * 3 * 8 * 8, dtype=torch.float32).reshape(64, 3, 8, 8)
    loader = DataLoader(TensorDataset(data), batch_size=16, pin_memory=True, num_workers=2)
    host = next(iter(loader))[0]
    assert host.is_pinned()  # pin_memory's thread pinned the batch in page-locked memory
    got = [b[0] for b in DeviceLoader(loader, "cuda", non_blocking=True)]
    assert all(b.device.type == "cuda" for b in got)
    assert torch.equal(torch.cat(got).cpu(), data)


def test_side_stream_copy_overlaps_the_previous_steps_compute():
    """The copy's CUDA events, on the side stream, fall inside a step's compute events."""
    from autotune.transfer.device_loader import DeviceLoader

    batches = [torch.full((64, 3, 224, 224), float(i)).pin_memory() for i in range(8)]
    weight = torch.randn(2048, 2048, device="cuda")
    loader = DeviceLoader(batches, "cuda", non_blocking=True, side_stream_prefetch=True)
    copies: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []

    def timed_copy(name: str):
        class Span:
            def __enter__(self):
                self.start = torch.cuda.Event(enable_timing=True)
                self.end = torch.cuda.Event(enable_timing=True)
                self.start.record()  # on the side stream: DeviceLoader enters it before the phase

            def __exit__(self, *exc):
                self.end.record()
                if name == "copy":
                    copies.append((self.start, self.end))

        return Span()

    loader.phase = timed_copy
    origin = torch.cuda.Event(enable_timing=True)
    origin.record()
    steps = []
    means = []
    for batch in loader:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x = weight
        for _ in range(20):  # ~ms of compute that the next copies can hide behind
            x = torch.tanh(x @ weight)
        means.append(batch.float().mean())  # checked after the loop: .item() here would sync
        end.record()
        steps.append((start, end))
    torch.cuda.synchronize()
    assert [m.item() for m in means] == [float(i) for i in range(8)]

    def at(event: torch.cuda.Event) -> float:
        return origin.elapsed_time(event)

    overlapped = sum(
        1 for (c0, c1) in copies for (s0, s1) in steps if at(c0) < at(s1) and at(c1) > at(s0)
    )
    assert len(copies) == len(steps) == 8
    assert overlapped >= 3, [(at(c0), at(c1)) for c0, c1 in copies] + [
        (at(s0), at(s1)) for s0, s1 in steps
    ]


def test_phase_clock_reads_device_time_from_cuda_events():
    from autotune.telemetry.phases import PhaseClock

    clock = PhaseClock(torch.device("cuda"))
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(5):
        with clock.span("compute"):
            for _ in range(4):
                a = torch.tanh(a @ a)
    device_s = clock.device_total("compute")
    wall_s = clock.wall_total("compute")
    assert device_s is not None and device_s > 0
    # Kernels run asynchronously: the host returns long before the device finishes.
    assert device_s > wall_s


def test_nvml_reads_utilization_and_memory_while_a_step_runs():
    from autotune.telemetry.nvml import NvmlSampler

    sampler = NvmlSampler.for_device(torch.cuda.current_device())
    assert sampler is not None, "NVML unavailable on a machine with a CUDA device"
    sampler.start()
    _busy(1.5)
    stats = sampler.stop()
    assert stats is not None
    assert stats.util_mean_pct > 0
    assert stats.mem_peak_mib > 0
    assert stats.name


def test_channels_last_reaches_the_model():
    from autotune.transfer.device_loader import DeviceLoader
    from autotune.workload.model_step import ModelStep

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 4),
    )
    seen: list[bool] = []
    model[0].register_forward_pre_hook(
        lambda _m, args: seen.append(args[0].is_contiguous(memory_format=torch.channels_last))
    )
    step = ModelStep(model, torch.device("cuda"), amp=True)
    batches = [(torch.randn(8, 3, 32, 32), torch.randint(0, 4, (8,))) for _ in range(3)]
    for batch in DeviceLoader(batches, "cuda", channels_last=True):
        step(batch)
    assert seen == [True, True, True]
    assert model[0].weight.is_contiguous(memory_format=torch.channels_last)


def test_device_ceiling_runs_the_step_on_the_gpu():
    from autotune.probe.device import device_ceiling
    from autotune.workload.base import Workload

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    dataset = torch.utils.data.TensorDataset(
        torch.randn(64, 3, 64, 64), torch.randint(0, 10, (64,))
    )
    workload = Workload.from_model(dataset, model, 32, device=torch.device("cuda"), amp=True)
    batch = (torch.randn(32, 3, 64, 64), torch.randint(0, 10, (32,)))
    probe = device_ceiling(
        workload,
        batch,
        torch.device("cuda"),
        min_seconds=0.3,
        min_steps=5,
        warmup_steps=2,
        channels_last=True,
    )
    assert probe.samples_per_s > 0 and probe.steps >= 5
    assert next(model.parameters()).device.type == "cuda"
