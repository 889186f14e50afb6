"""Run one configuration of a workload for a bounded window and measure it.

Timeline of a burst:
  start-up   iter(loader) until the first batch: worker processes start (recorded on its own);
  warm-up    a few real steps (allocator, cudnn autotuning), then real steps until the start-up
             fill has gone through (settle): during start-up the workers fill up to num_workers x
             prefetch_factor batches ahead, and a window that starts on that fill reports a rate
             the loader cannot sustain. Draining it by pulls without steps is no cure: an
             oversubscribed pool's steady state keeps most of its buffer full behind one starved
             worker, and a drained window spends itself refilling it. Then, in an epoch of known
             length, steps until the window starts in the epoch's middle (pacing.py);
  window     extended until it is long relative to the batches in flight, the loader's backlog
             of finished batches is back where it started and its two halves agree (steady), at
             most `max_seconds`, and ended before the epoch's tail; its rate is what the loader
             produced in it: consumed samples plus the backlog's change (window.py, backlog.py).
             An epoch too short to hold it is timed whole instead (epoch_window.py);
  restart    what an epoch boundary costs: the start-up above for a non-persistent pool (each
             epoch starts fresh workers), one re-iteration of the idle pool for a persistent one,
             or the boundaries of the whole epochs timed; the rate recorded is the one sustained
             over whole epochs (epoch.py);
  teardown   workers are shut down so the next burst starts clean; after a failure (a worker that
             raised, was killed or hung) they are killed, so none is left behind.

A burst runs under a time limit (see watchdog.py): a hang fails the burst with BurstTimeout.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator, Iterable, Iterator

import torch

from autotune.burst.backlog import ready_batches
from autotune.burst.epoch import EpochCost, EpochLength, epoch_cost, epoch_length, whole_epoch_cost
from autotune.burst.epoch_window import EpochPlace, WholeEpochs, measured_whole, whole_epochs
from autotune.burst.pacing import persistent_pool, refill_s, settle, to_middle
from autotune.burst.pool_start import start_allowance_s
from autotune.burst.result import BurstResult
from autotune.burst.teardown import no_strays, release_loader, shielded
from autotune.burst.watchdog import time_limit
from autotune.burst.window import (
    PullWaits,
    halves_agree,
    next_mark,
    window_complete,
    window_rate,
)
from autotune.errors import WorkloadError
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostSampler
from autotune.telemetry.nvml import NvmlSampler
from autotune.telemetry.phases import PhaseClock, stack_phases
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import batch_samples
from autotune.workload.accelerator import EmulatedAccelerator
from autotune.workload.base import Workload


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


class Epochs:
    """Batches across epoch boundaries, as a training loop re-iterates its loader (a new epoch
    restarts non-persistent workers: a real cost); `epochs` counts the iter() calls so far and
    `position` is the last batch's place in its epoch."""

    def __init__(self, feed: Iterable[Any]):
        self.feed = feed
        self.epochs = 0
        self.position = -1  # of the last batch handed out, within its epoch

    def __iter__(self) -> Generator[Any, None, None]:
        while True:
            self.epochs += 1
            empty = True
            for position, batch in enumerate(self.feed):
                self.position = position
                empty = False
                yield batch
            if empty:
                raise WorkloadError(
                    "the loader produced no batch: the dataset is smaller than one batch"
                )


def endless_batches(feed: Iterable[Any]) -> Generator[Any, None, None]:
    return iter(Epochs(feed))


def run_burst(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    settings: BurstSettings = BurstSettings(),
    *,
    usable_cpus: int = 1,
    gpu_sampler: NvmlSampler | None = None,
    on_progress: ProgressHook | None = None,
    marks: PhaseHook | None = None,
) -> BurstResult:
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
        limit_s = (
            settings.time_limit_s + start_allowance_s(config, usable_cpus)
            if settings.time_limit_s
            else None
        )
        timeout = {"timeout": limit_s} if limit_s and config.num_workers else {}
        with no_strays():
            loader = workload.make_loader(config, **timeout)
            feed = DeviceLoader(loader, device, phase=phase, **config.transfer_kwargs())
            epochs = Epochs(feed)
            batches = iter(epochs)
            samplers: list[Any] = []
            failed = True
            try:
                with time_limit(limit_s):
                    length = epoch_length(loader, workload.batch_size)
                    place = EpochPlace(length.batches, config.prefetch_depth)

                    # `feed` bound as a default: the finally below deletes the name.
                    def ready(feed: DeviceLoader = feed) -> int | None:
                        return ready_batches(feed.iterator)

                    result, whole = _measure(
                        workload,
                        config,
                        batches,
                        ready,
                        clock,
                        phase,
                        settings,
                        usable_cpus,
                        gpu_sampler,
                        on_progress,
                        samplers,
                        t_begin,
                        epochs,
                        place,
                    )
                    if whole is not None:
                        result = with_cost(result, whole_epoch_cost(whole, length))
                    else:
                        # No pool, no restart: the main process loads the next epoch's first
                        # batch as any other (its one-time start-up, e.g. opening files, is not
                        # repeated).
                        first_batch = (
                            0.0
                            if config.num_workers == 0
                            else refill_s(loader, settings.max_seconds / 2)
                            if persistent_pool(loader)
                            else result.startup_s
                        )
                        result = with_epochs(result, first_batch, length)
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


def with_epochs(result: BurstResult, first_batch_s: float, length: EpochLength) -> BurstResult:
    """The window's result as a rate over whole epochs, with what an epoch boundary costs."""
    return with_cost(
        result,
        epoch_cost(
            result.samples_per_s,
            result.window_s,
            result.window_epochs,
            first_batch_s,
            max(1, round(result.samples / max(1, result.steps))),
            length,
        ),
    )


def with_cost(result: BurstResult, cost: EpochCost) -> BurstResult:
    return replace(
        result,
        samples_per_s=cost.samples_per_s,
        steady_samples_per_s=cost.steady_samples_per_s,
        first_batch_s=cost.first_batch_s,
        restart_cost_s=cost.restart_cost_s,
        epoch_samples=cost.length.samples,
    )


def _measure(
    workload: Workload,
    config: LoaderConfig,
    batches: Iterator[Any],
    backlog: Callable[[], int | None],
    clock: PhaseClock,
    phase: PhaseHook,
    settings: BurstSettings,
    usable_cpus: int,
    gpu_sampler: NvmlSampler | None,
    on_progress: ProgressHook | None,
    running: list[Any],
    t_begin: float,
    epochs: Epochs,
    place: EpochPlace,
) -> tuple[BurstResult, WholeEpochs | None]:
    """The window's result and, where it measured whole epochs (epoch_window.py), those."""
    clock.recording = False

    def run_step(batch: Any) -> None:
        with phase("compute"):
            workload.step(batch)

    first = next(batches)
    t_first = time.perf_counter()
    run_step(first)
    del first
    for _ in range(settings.warmup_steps):
        run_step(next(batches))
    # The samplers' first readings take up to 0.2 s: started before the settle phase, not
    # between it and the window, where the loader would work ahead of a stalled consumer.
    host = HostSampler(usable_cpus)
    for sampler in (host, gpu_sampler):
        if sampler is not None:
            sampler.start()
            running.append(sampler)
    # Settling and placing share one limit, half the window's cap: the budget plans on it.
    t_settle, settle_limit = time.perf_counter(), settings.max_seconds / 2
    settle(batches, run_step, backlog, config.prefetch_depth, settle_limit)
    room = max(settings.min_steps, config.prefetch_depth)
    whole = measured_whole(place.batches, place.depth, settings.min_steps)
    if not whole:
        to_middle(
            batches,
            run_step,
            place,
            lambda: epochs.position,
            room,
            settle_limit - (time.perf_counter() - t_settle),
        )
    clock.synchronize()

    clock.recording = True
    accelerator = workload.step if isinstance(workload.step, EmulatedAccelerator) else None
    busy_start = accelerator.busy_s if accelerator is not None else 0.0
    t_window = time.perf_counter()
    epochs_before = epochs.epochs
    edges: list[int] = []  # marks that end an epoch, once whole epochs are measured
    marks = [next_mark([], t_window, 0, backlog(), 0.0)]
    pulls, unready_s = PullWaits(marks[0].backlog), 0.0  # waits for batches not yet made
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
        level, waited = backlog(), clock.wall_total("wait")
        unready_s += pulls.unready(waited - (marks[-1].waited or 0.0), level)
        marks.append(next_mark(marks, now, samples, level, waited))
        elapsed = now - t_window
        if on_progress is not None and now - last_report >= 0.5:
            last_report = now
            on_progress(elapsed, samples / elapsed)
        if whole and place.ends_epoch(epochs.position):
            edges.append(len(marks) - 1)
        if elapsed >= settings.max_seconds:
            break
        if whole:
            if (
                len(edges) >= 2
                and steps >= settings.min_steps
                and marks[edges[-1]].t - marks[edges[0]].t >= settings.min_seconds
            ):
                steady = True
                break
        elif place.last_before_tail(epochs.position):
            # A middle too short for the window: whole epochs from this one's end, where one fits
            # in the cap; otherwise the window ends here, as long as it may be.
            fits = place.whole_epoch_fits(elapsed / steps, settings.max_seconds - elapsed)
            if steps >= room and (elapsed >= settings.min_seconds or not fits):
                steady = halves_agree(marks, settings.steady_tolerance)
                break
            whole = True
        elif window_complete(
            marks,
            min_steps=settings.min_steps,
            min_seconds=settings.min_seconds,
            depth=config.prefetch_depth,
            tolerance=settings.steady_tolerance,
        ):
            steady = True
            break
    clock.synchronize()
    t_end = time.perf_counter()
    marks[-1] = replace(marks[-1], t=t_end)
    running.clear()
    host_stats = host.stop()
    gpu_stats = gpu_sampler.stop() if gpu_sampler is not None else None
    measured = whole_epochs(marks, edges) if whole else None
    rate = measured.samples_per_s if measured is not None else window_rate(marks)
    return BurstResult(
        config=config,
        samples_per_s=rate,
        steps=steps,
        samples=samples,
        window_s=t_end - t_window,
        startup_s=t_first - t_begin,
        warmup_s=t_window - t_first,
        duration_s=0.0,
        steady=steady,
        wait_s=clock.wall_total("wait"),
        copy_s=clock.wall_total("copy"),
        compute_s=clock.wall_total("compute"),
        device_copy_s=clock.device_total("copy"),
        device_compute_s=clock.device_total("compute"),
        host=host_stats,
        gpu=gpu_stats,
        device_busy_s=accelerator.busy_s - busy_start if accelerator is not None else None,
        backlog_start=marks[0].backlog,
        backlog_end=marks[-1].backlog,
        window_epochs=epochs.epochs - epochs_before,
        unready_s=unready_s,
    ), measured
