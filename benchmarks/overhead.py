"""What autotune's own measuring costs: one configuration run in a plain loop (the DataLoader, the
batches moved to the device, the step: no hooks) against the same configuration with autotune's
instrumentation on (the burst's phase clocks around wait, copy and compute, the host sampler, and
the GPU sampler where there is one), with the optional NVTX ranges or torch.profiler, and with
the per-stage timing inside the workers (profiling/stages.py).

Plain and instrumented run side by side on one loader, alternating in short segments in ABBA
order, so load from other processes on a shared machine falls on both alike; each pair of
neighbouring segments gives one ratio, and the median ratio is the figure. Before every segment
the prefetch buffer is drained, as a burst does before its window, so no segment starts with
batches the previous one left ready. Sampler and profiler start/stop happen outside the segments.

On a machine shared with other busy processes the throughput ratios scatter far more than 2%, so
the instrumentation's cost is also accounted directly, which load does not disturb: the CPU time
of the phase spans on the training thread per step, and the CPU time of the host sampler per
second, both measured here. Their sum, taken as if all of it delayed the step, bounds the cost.

The stage timing lives in the workers, so it cannot be switched on one live pool: a plain and a
stage-timed loader of the same configuration are both kept alive and alternate in the same ABBA
segments (an idle pool stops once its prefetch buffer is full). Its direct account is the CPU one
timed stage adds over an untimed call, times the stage calls per item, over the worker's CPU
per item that the stage table measured.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

import torch
from torch.profiler import ProfilerActivity, profile

from autotune.burst.pacing import drain_prefetched
from autotune.burst.runner import endless_batches, release_loader
from autotune.profiling.nvtx import fetch_ranges, load_nvtx, nvtx_phases
from autotune.profiling.stage_recorder import WARMUP_BATCHES, read_totals, recorder, release
from autotune.profiling.stage_table import StageTable, stage_table
from autotune.profiling.stages import StageKind, Timed, timed_workload
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.telemetry.host import HostSampler
from autotune.telemetry.nvml import NvmlSampler
from autotune.telemetry.phases import PHASES, PhaseClock, stack_phases
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import batch_samples
from autotune.workload.base import Workload
from benchmarks.alternate import round_order
from benchmarks.overhead_result import (
    AUTOTUNE,
    CONTROL,
    NVTX,
    PROFILER,
    STAGES,
    AccountedCost,
    Comparison,
    OverheadResult,
    StageCost,
)

WARMUP_STEPS = 3

# An instrumented variant: given the feed, set up, yield the hook around compute (None: none), undo.
Variant = Callable[[DeviceLoader], ContextManager[PhaseHook | None]]


def _segment(
    workload: Workload,
    batches: Iterator[Any],
    device: torch.device,
    seconds: float,
    compute: PhaseHook | None,
) -> float:
    """Samples/s over one timed segment."""
    samples = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        batch = next(batches)
        if compute is None:
            workload.step(batch)
        else:
            with compute("compute"):
                workload.step(batch)
        samples += batch_samples(batch, workload.batch_size)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return samples / (time.perf_counter() - t0)


def _alternate(pairs: int, segment: Callable[[bool], float]) -> Comparison:
    """`pairs` of (plain, instrumented) segment rates, in ABBA order: `segment(instrumented)`."""
    out = Comparison()
    for index in range(pairs):
        rates = {
            instrumented: segment(instrumented)
            for instrumented in round_order((False, True), index)
        }
        out.pairs.append((rates[False], rates[True]))
    return out


def compare(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    variant: Variant,
    *,
    pairs: int,
    segment_s: float,
) -> Comparison:
    """Plain against `variant` on one loader, in ABBA-ordered segments."""
    loader = workload.make_loader(config)
    feed = DeviceLoader(loader, device, **config.transfer_kwargs())  # no phase hook: plain
    batches = endless_batches(feed)

    def segment(instrumented: bool) -> float:
        with variant(feed) if instrumented else contextlib.nullcontext() as compute:
            drain_prefetched(batches, config.prefetch_depth)
            return _segment(workload, batches, device, segment_s, compute)

    try:
        for _ in range(WARMUP_STEPS):
            workload.step(next(batches))
        return _alternate(pairs, segment)
    finally:
        batches.close()
        release_loader(loader)


def autotune_hooks(device: torch.device, marks: PhaseHook | None = None) -> Variant:
    """The instrumentation of a burst, switched on for the length of one segment."""
    cpus = usable_cpus().count

    @contextlib.contextmanager
    def hooks(feed: DeviceLoader) -> Iterator[PhaseHook]:
        clock = PhaseClock(device)
        phase = clock.span if marks is None else stack_phases(marks, clock.span)
        samplers = [HostSampler(cpus)]
        if device.type == "cuda":
            samplers += [s for s in [NvmlSampler.for_device(device.index or 0)] if s is not None]
        plain_phase = feed.phase
        feed.phase = phase
        for sampler in samplers:
            sampler.start()
        try:
            yield phase
        finally:
            feed.phase = plain_phase
            for sampler in samplers:
                sampler.stop()

    return hooks


def no_hooks(feed: DeviceLoader) -> ContextManager[None]:
    """The control: plain against plain shows how far the machine's noise alone moves a ratio."""
    return contextlib.nullcontext()


def profiler_on(device: torch.device) -> Variant:
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])

    @contextlib.contextmanager
    def hooks(feed: DeviceLoader) -> Iterator[None]:
        with profile(activities=activities):
            yield None

    return hooks


def span_cost_us(device: torch.device, spans: int = 20000) -> float:
    clock = PhaseClock(device)
    t0 = time.thread_time()
    for _ in range(spans):
        with clock.span("compute"):
            pass
    return 1e6 * (time.thread_time() - t0) / spans


class _TimedHostSampler(HostSampler):
    """The host sampler, counting the CPU time its own samples take (thread CPU clock)."""

    def __init__(self, usable: int):
        super().__init__(usable)
        self.cpu_s = 0.0

    def sample(self) -> None:
        t0 = time.thread_time()
        super().sample()
        self.cpu_s += time.thread_time() - t0


def sampler_cpu_ms_per_s(workload: Workload, config: LoaderConfig, seconds: float) -> float:
    """Host sampler CPU per second, sampling this process and a live pool of the config's
    workers."""
    loader = workload.make_loader(config)
    batches = endless_batches(DeviceLoader(loader, torch.device("cpu")))
    try:
        next(batches)  # the workers are up
        sampler = _TimedHostSampler(usable_cpus().count)
        sampler.start()
        # A burst takes the first and the last sample outside its window: count only those between.
        sampler.cpu_s = 0.0
        t0 = time.perf_counter()
        time.sleep(seconds)
        cpu_s, wall = sampler.cpu_s, time.perf_counter() - t0
        sampler.stop()
        return 1000 * cpu_s / wall
    finally:
        batches.close()
        release_loader(loader)


def compare_stage_timing(
    workload: Workload, config: LoaderConfig, device: torch.device, *, pairs: int, segment_s: float
) -> tuple[Comparison, StageTable | None]:
    """A plain and a stage-timed loader alive side by side, alternating in ABBA segments; the
    stage table of what the timed one's workers recorded."""
    with tempfile.TemporaryDirectory(prefix="autotune-stages-") as tmp:
        timed, plan = timed_workload(workload, Path(tmp))
        loaders = {False: workload.make_loader(config), True: timed.make_loader(config)}
        feeds = {
            k: endless_batches(DeviceLoader(v, device, **config.transfer_kwargs()))
            for k, v in loaders.items()
        }

        def segment(instrumented: bool) -> float:
            drain_prefetched(feeds[instrumented], config.prefetch_depth)
            return _segment(workload, feeds[instrumented], device, segment_s, None)

        try:
            for batches in feeds.values():
                for _ in range(WARMUP_STEPS):
                    workload.step(next(batches))
            out = _alternate(pairs, segment)
        finally:
            for instrumented, batches in feeds.items():
                batches.close()
                release_loader(loaders[instrumented])
            release(tmp)
        totals, processes = read_totals(Path(tmp))
    return out, stage_table(plan, totals, processes)


def _noop(x: Any) -> Any:
    return x


def stage_timer_us(calls: int = 20000) -> float:
    """The CPU one timed stage adds over calling it untimed (thread CPU clock)."""
    with tempfile.TemporaryDirectory(prefix="autotune-stages-") as tmp:
        recorder(tmp).batches = WARMUP_BATCHES  # past the warm-up: every call is recorded
        timed = Timed(_noop, "noop", tmp)
        t0 = time.thread_time()
        for i in range(calls):
            _noop(i)
        plain = time.thread_time() - t0
        t0 = time.thread_time()
        for i in range(calls):
            timed(i)
        with_timer = time.thread_time() - t0
        release(tmp)
    return 1e6 * max(0.0, with_timer - plain) / calls


def stage_cost(table: StageTable, batch_size: int) -> StageCost:
    """Stage calls per item: each recognised stage and __getitem__ once, collate once a batch."""
    inner = sum(1 for r in table.rows if r.kind not in (StageKind.FETCH, StageKind.COLLATE))
    return StageCost(stage_timer_us(), inner + 1 + 1 / batch_size, table.cpu_ms_per_item)


def measure_overhead(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    *,
    pairs: int = 16,
    segment_s: float = 0.5,
    on_variant: Callable[[str, Comparison], None] | None = None,
) -> OverheadResult:
    out = OverheadResult(str(workload.name), config, str(device), segment_s)
    variants: dict[str, Callable[[], Comparison]] = {
        CONTROL: lambda: compare(
            workload, config, device, no_hooks, pairs=pairs, segment_s=segment_s
        ),
        AUTOTUNE: lambda: compare(
            workload, config, device, autotune_hooks(device), pairs=pairs, segment_s=segment_s
        ),
        PROFILER: lambda: compare(
            workload, config, device, profiler_on(device), pairs=pairs, segment_s=segment_s
        ),
    }
    nvtx = load_nvtx()
    if nvtx is not None:

        def with_nvtx() -> Comparison:
            with fetch_ranges(nvtx):  # in place when the workers fork: on in both arms
                return compare(
                    workload,
                    config,
                    device,
                    autotune_hooks(device, nvtx_phases(nvtx)),
                    pairs=pairs,
                    segment_s=segment_s,
                )

        variants[NVTX] = with_nvtx
        out.notes.append(
            "autotune+nvtx: the per-step ranges (wait, copy, compute) were switched"
            " per segment; the fetch/collate ranges inside forked workers were on in"
            " both arms, so their cost is not in this figure. NVTX was measured with"
            " no profiler attached; its cost while nsys records was not measured here"
        )
    else:
        out.notes.append("NVTX not measured: this torch build cannot call NVTX")
    if device.type != "cuda":
        out.notes.append(
            "CPU-only run: no GPU sampler, CUDA events or host->device copies were part"
            " of the measured instrumentation"
        )
    for name, run in variants.items():
        out.comparisons[name] = run()
        if on_variant is not None:
            on_variant(name, out.comparisons[name])
    out.comparisons[STAGES], table = compare_stage_timing(
        workload, config, device, pairs=pairs, segment_s=segment_s
    )
    if on_variant is not None:
        on_variant(STAGES, out.comparisons[STAGES])
    if table is not None:
        out.stage_cost = stage_cost(table, workload.batch_size)
        out.notes.append(
            f"stage timing: {len(table.rows)} stages ({', '.join(r.name for r in table.rows)});"
            " a plain and a stage-timed loader alternated, both pools alive throughout"
        )
    plain_rate = out.comparisons[AUTOTUNE].median_rates()[0]
    out.accounted = AccountedCost(
        span_cost_us(device),
        len(PHASES),
        1000 * workload.batch_size / plain_rate,
        sampler_cpu_ms_per_s(workload, config, pairs * segment_s),
    )
    return out
