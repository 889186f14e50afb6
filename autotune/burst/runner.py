"""Run one configuration of a workload for a bounded window and measure it.

Timeline of a burst:
  start-up   iter(loader) until the first batch: worker processes start (recorded on its own);
  warm-up    a few real steps (allocator, cudnn autotuning), then the prefetch buffer is drained:
             during start-up the workers fill up to num_workers x prefetch_factor batches ahead,
             and a window that starts on a full buffer reports a rate the loader cannot sustain;
  window     at least `min_steps` and `min_seconds`, extended until its two halves agree
             (steady), at most `max_seconds`; a window that never steadies counts at its slower
             reading;
  teardown   workers are shut down so the next burst starts clean; after a failure (a worker that
             raised, was killed or hung) they are killed, so none is left behind.

A burst runs under a time limit (see watchdog.py): a hang fails the burst with BurstTimeout.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator

import torch

from autotune.burst.result import BurstResult
from autotune.burst.teardown import no_strays, release_loader, shielded
from autotune.burst.watchdog import time_limit
from autotune.errors import WorkloadError
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostSampler
from autotune.telemetry.nvml import NvmlSampler
from autotune.telemetry.phases import PhaseClock, stack_phases
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import batch_samples
from autotune.workload.accelerator import EmulatedAccelerator
from autotune.workload.base import Workload

# A pull that takes this long found the buffer empty: the workers are now the ones being waited on.
DRAINED_PULL_S = 0.002


@dataclass(frozen=True)
class BurstSettings:
    """The defaults are one tuner trial: short on purpose. The search explores with single short
    bursts and the best few are measured again, which estimates the noise instead of hoping to
    average it away in long windows."""

    min_steps: int = 8
    min_seconds: float = 0.5
    max_seconds: float = 3.0
    warmup_steps: int = 2
    steady_tolerance: float = 0.10  # relative difference allowed between the window's halves
    time_limit_s: float | None = None  # the whole burst, start-up to window end; None: no limit


ProgressHook = Callable[[float, float], None]  # (seconds into the window, samples/s so far)


def endless_batches(feed: Iterable[Any]) -> Iterator[Any]:
    """Batches across epoch boundaries (a new epoch restarts non-persistent workers: a real cost)."""
    while True:
        empty = True
        for batch in feed:
            empty = False
            yield batch
        if empty:
            raise WorkloadError("the loader produced no batch: the dataset is smaller than one batch")


def drain_prefetched(batches: Iterator[Any], depth: int) -> None:
    """Pull ready batches without stepping until a pull has to wait, at most `depth` of them."""
    fastest = float("inf")
    for _ in range(depth):
        t0 = time.perf_counter()
        next(batches)
        pull = time.perf_counter() - t0
        if pull > DRAINED_PULL_S and pull > 3 * fastest:
            return
        fastest = min(fastest, pull)


def _rate(marks: list[tuple[float, int]], lo: int, hi: int) -> float:
    (t_lo, s_lo), (t_hi, s_hi) = marks[lo], marks[hi]
    return (s_hi - s_lo) / max(t_hi - t_lo, 1e-12)


def window_rate(marks: list[tuple[float, int]], steady: bool) -> float:
    """Samples/s of a window given as (time, samples so far) marks, one per step.

    Steady: the whole window. Not steady: the slower of the whole window and its later half, so
    that a transient never inflates a rate. A buffer not quite drained makes the first half fast
    (the later half is the truth); a deep buffer still filling takes the CPU from the step and
    makes the first half slow, and its later half then empties that buffer faster than it can be
    refilled (measured on the demo: w5 pf8 reads 358/s from the later half of a 3 s window but
    sustains 319/s over 20 s, against 354/s for w3 pf2)."""
    steps = len(marks) - 1
    whole = _rate(marks, 0, steps)
    return whole if steady else min(whole, _rate(marks, steps // 2, steps))


def run_burst(workload: Workload, config: LoaderConfig, device: torch.device,
              settings: BurstSettings = BurstSettings(), *, usable_cpus: int = 1,
              gpu_sampler: NvmlSampler | None = None,
              on_progress: ProgressHook | None = None,
              marks: PhaseHook | None = None) -> BurstResult:
    """`marks`, when given, also wraps every phase (wait, copy, compute), e.g. in NVTX ranges."""
    with warnings.catch_warnings():
        # Going past the core count is deliberate (storage-bound datasets gain from it): silence
        # torch's "excessive worker creation" warning for bursts.
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        t_begin = time.perf_counter()
        clock = PhaseClock(device)
        phase = clock.span if marks is None else stack_phases(marks, clock.span)
        # No single batch may take longer than the whole burst may: torch raises in the main
        # process when a worker goes silent that long (the watchdog's back-up off the main thread).
        timeout = {"timeout": settings.time_limit_s} if settings.time_limit_s and config.num_workers else {}
        with no_strays():
            loader = workload.make_loader(config, **timeout)
            feed = DeviceLoader(loader, device, phase=phase, **config.transfer_kwargs())
            batches = endless_batches(feed)
            samplers: list[Any] = []
            failed = True
            try:
                with time_limit(settings.time_limit_s):
                    result = _measure(workload, config, batches, clock, phase, settings, usable_cpus,
                                      gpu_sampler, on_progress, samplers, t_begin)
                failed = False
            finally:
                # Workers first: a failure may have come from them, and nothing below may stop
                # them from being reaped.
                with shielded():
                    try:
                        release_loader(loader, feed.iterator, force=failed)
                    finally:
                        for sampler in samplers:  # only those still running after an error
                            sampler.halt()
                        batches.close()
                        del batches, feed, loader
    return replace(result, duration_s=time.perf_counter() - t_begin)


def _measure(workload: Workload, config: LoaderConfig, batches: Iterator[Any], clock: PhaseClock,
             phase: PhaseHook, settings: BurstSettings, usable_cpus: int, gpu_sampler: NvmlSampler | None,
             on_progress: ProgressHook | None, running: list[Any], t_begin: float) -> BurstResult:
    clock.recording = False
    first = next(batches)
    t_first = time.perf_counter()
    with phase("compute"):
        workload.step(first)
    del first
    for _ in range(settings.warmup_steps):
        batch = next(batches)
        with phase("compute"):
            workload.step(batch)
    clock.synchronize()
    drain_prefetched(batches, config.prefetch_depth)

    clock.recording = True
    host = HostSampler(usable_cpus)
    for sampler in (host, gpu_sampler):
        if sampler is not None:
            sampler.start()
            running.append(sampler)
    accelerator = workload.step if isinstance(workload.step, EmulatedAccelerator) else None
    busy_start = accelerator.busy_s if accelerator is not None else 0.0
    t_window = time.perf_counter()
    marks = [(t_window, 0)]
    samples = steps = 0
    last_report = t_window
    steady = False
    while True:
        batch = next(batches)
        with phase("compute"):
            workload.step(batch)
        steps += 1
        samples += batch_samples(batch, workload.batch_size)
        now = time.perf_counter()
        marks.append((now, samples))
        elapsed = now - t_window
        if on_progress is not None and now - last_report >= 0.5:
            last_report = now
            on_progress(elapsed, samples / elapsed)
        if elapsed >= settings.max_seconds:
            break
        if steps >= settings.min_steps and elapsed >= settings.min_seconds:
            mid = steps // 2
            first, second = _rate(marks, 0, mid), _rate(marks, mid, steps)
            if abs(first - second) <= settings.steady_tolerance * second:
                steady = True
                break
    clock.synchronize()
    t_end = time.perf_counter()
    marks[-1] = (t_end, samples)
    running.clear()
    host_stats = host.stop()
    gpu_stats = gpu_sampler.stop() if gpu_sampler is not None else None
    rate = window_rate(marks, steady)
    return BurstResult(
        config=config, samples_per_s=rate, steps=steps, samples=samples,
        window_s=t_end - t_window, startup_s=t_first - t_begin, warmup_s=t_window - t_first,
        duration_s=0.0, steady=steady,
        wait_s=clock.wall_total("wait"), copy_s=clock.wall_total("copy"),
        compute_s=clock.wall_total("compute"),
        device_copy_s=clock.device_total("copy"), device_compute_s=clock.device_total("compute"),
        host=host_stats, gpu=gpu_stats,
        device_busy_s=accelerator.busy_s - busy_start if accelerator is not None else None,
    )
