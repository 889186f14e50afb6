"""`--trace`: a torch.profiler trace of the tuned configuration.

The trace is written by torch's TensorBoard handler as `<name>.<time>.pt.trace.json`: Perfetto
(ui.perfetto.dev) and chrome://tracing open the file, TensorBoard's profiler plugin and HTA
(TraceAnalysis(trace_dir=...)) the folder. The step's phases appear as `autotune.wait`,
`autotune.copy` and `autotune.compute` ranges. Its cost is measured on the same loader: median step
time of the profiled steps against unprofiled steps just before and after them.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import torch
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

from autotune.burst.pacing import drain_prefetched
from autotune.burst.runner import endless_batches, release_loader
from autotune.space.config import LoaderConfig
from autotune.transfer.device_loader import DeviceLoader
from autotune.workload.base import Workload

SCHEDULE = {"wait": 1, "warmup": 1, "active": 5}
WARMUP_STEPS = 3
PLAIN_STEPS = 10  # unprofiled steps on each side of the profiled ones
TRACE_NAME = "autotune"


@dataclass(frozen=True)
class TraceRecord:
    path: Path  # the trace file
    active_steps: int
    plain_step_ms: float  # median step time without the profiler
    traced_step_ms: float  # median step time of the profiled (active) steps
    export_s: float  # writing the trace after the last active step, outside the step times

    @property
    def overhead_pct(self) -> float:
        return 100 * (self.traced_step_ms / self.plain_step_ms - 1)


def _phase(name: str) -> Any:
    return record_function(f"autotune.{name}")


def _timed_step(workload: Workload, batches: Iterator[Any]) -> float:
    t0 = time.perf_counter()
    batch = next(batches)
    with _phase("compute"):
        workload.step(batch)
    return time.perf_counter() - t0


def _activities(device: torch.device) -> list[ProfilerActivity]:
    return [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])


def record_trace(
    workload: Workload, config: LoaderConfig, device: torch.device, out_dir: Path
) -> TraceRecord:
    out_dir.mkdir(parents=True, exist_ok=True)
    loader = workload.make_loader(config)
    batches = endless_batches(
        DeviceLoader(loader, device, phase=_phase, **config.transfer_kwargs())
    )
    total = sum(SCHEDULE.values())
    try:
        for _ in range(WARMUP_STEPS):
            workload.step(next(batches))
        drain_prefetched(batches, config.prefetch_depth)
        plain = [_timed_step(workload, batches) for _ in range(PLAIN_STEPS)]
        export_s = 0.0
        traced: list[float] = []
        with profile(
            activities=_activities(device),
            schedule=schedule(**SCHEDULE),
            on_trace_ready=tensorboard_trace_handler(str(out_dir), worker_name=TRACE_NAME),
        ) as prof:
            for index in range(total):
                seconds = _timed_step(workload, batches)
                if index >= total - SCHEDULE["active"]:
                    traced.append(seconds)
                t0 = time.perf_counter()
                prof.step()  # after the last active step this writes the trace
                export_s = time.perf_counter() - t0
        plain += [_timed_step(workload, batches) for _ in range(PLAIN_STEPS)]
    finally:
        batches.close()
        release_loader(loader)
    path = max(out_dir.glob(f"{TRACE_NAME}.*.pt.trace.json"), key=lambda p: p.stat().st_mtime)
    return TraceRecord(
        path,
        len(traced),
        1000 * statistics.median(plain),
        1000 * statistics.median(traced),
        export_s,
    )
