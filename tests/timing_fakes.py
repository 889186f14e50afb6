"""A clock that moves only when the code under test sleeps or burns CPU, and a loader on it.

Timing code reads `time` through its module (`time.perf_counter()`), so installing a FakeClock as
that module's `time` makes every window, rate and CPU share follow from the numbers a test gives,
never from how busy the machine is. Statistical claims about real bursts belong to the bench.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterator

import pytest
import torch

from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostStats
from autotune.workload.base import Workload


class FakeClock:
    """Stands in for the `time` module: wall time (`perf_counter`) and this process's CPU time
    (`process_time`, `thread_time`) advance only through `sleep` and `burn`."""

    def __init__(self) -> None:
        self.now = 0.0
        self.cpu = 0.0

    def perf_counter(self) -> float:
        return self.now

    monotonic = time = perf_counter

    def process_time(self) -> float:
        return self.cpu

    thread_time = process_time

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            # A sleep always moves the clock, even by less than a float step at this magnitude:
            # a loop sleeping until a deadline must reach it.
            self.now = max(self.now + seconds, math.nextafter(self.now, math.inf))

    def burn(self, seconds: float) -> None:
        """CPU work on this thread: wall and CPU time both advance."""
        self.sleep(seconds)
        self.cpu += seconds

    def install(self, monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> FakeClock:
        for module in modules:
            monkeypatch.setattr(module, "time", self)
        return self


class ScheduledLoader:
    """A DataLoader stand-in on a FakeClock, scheduled as torch schedules worker processes:
    batch k goes to worker k mod `workers`, at most workers x prefetch batches are in flight (a
    batch is dispatched once the one `depth` before it is consumed), each takes a worker
    `batch_s`, and batches are handed out in order. Nothing runs: consuming a batch only moves the
    clock to when it is ready. Its backlog cannot be read (like a custom iterator's). At least one
    worker: with none, the real DataLoader on a faked dataset does the job. With `batches`, an
    epoch ends after that many and each iter() starts the workers `restart_s` later; with
    `persistent` workers, only the first iter() does."""

    def __init__(
        self,
        clock: FakeClock,
        batch_size: int,
        *,
        workers: int,
        prefetch: int,
        batch_s: float,
        batches: int | None = None,
        restart_s: float = 0.0,
        persistent: bool = False,
    ):
        self.clock = clock
        self.persistent = persistent
        self.started = False
        self.batch_size = batch_size
        self.workers = workers
        self.depth = workers * prefetch
        self.batch_s = batch_s
        self.batches = batches
        self.restart_s = restart_s

    def __len__(self) -> int:
        if self.batches is None:
            raise TypeError("an endless loader has no length")
        return self.batches

    def __iter__(self) -> Iterator[Any]:
        restart = 0.0 if self.persistent and self.started else self.restart_s
        self.started = True
        start = self.clock.now + restart  # the workers start at once
        free = [start] * self.workers  # when each worker finishes what it was given before
        consumed: list[float] = []
        while self.batches is None or len(consumed) < self.batches:
            k = len(consumed)
            dispatched = consumed[k - self.depth] if k >= self.depth else start
            worker = k % self.workers
            free[worker] = max(dispatched, free[worker]) + self.batch_s
            self.clock.sleep(free[worker] - self.clock.now)  # waits only if it is not ready yet
            consumed.append(self.clock.now)
            yield torch.zeros(self.batch_size, 4), torch.zeros(self.batch_size, dtype=torch.long)


@dataclass
class ScheduledWorkload(Workload):
    """A workload whose loader is a ScheduledLoader with the config's workers and prefetch (a
    dataclass field, so `dataclasses.replace`, as --target-rate uses, keeps it)."""

    clock: FakeClock = field(default_factory=FakeClock)
    batch_s: float = 0.0
    epoch_batches: int | None = None
    restart_s: float = 0.0

    def make_loader(self, config: LoaderConfig, **_extra: Any) -> ScheduledLoader:
        return ScheduledLoader(
            self.clock,
            self.batch_size,
            workers=config.num_workers,
            prefetch=config.effective_prefetch_factor,
            batch_s=self.batch_s,
            batches=self.epoch_batches,
            restart_s=self.restart_s,
            persistent=config.persistent_workers,
        )


def scheduled_workload(
    clock: FakeClock,
    *,
    batch_size: int,
    batch_s: float,
    step: Any,
    epoch_batches: int | None = None,
    restart_s: float = 0.0,
) -> ScheduledWorkload:
    return ScheduledWorkload(
        list(range(64 * batch_size)),
        batch_size,
        step,
        name="scheduled",
        clock=clock,
        batch_s=batch_s,
        epoch_batches=epoch_batches,
        restart_s=restart_s,
    )


class FixedHost:
    """HostSampler stand-in: the process tree used `cores` CPU cores throughout. Its first sample
    takes `start_s` on `clock`, as reading every process's PSS does (60-170 ms on a busy 2-CPU
    machine)."""

    def __init__(self, cores: float, clock: FakeClock | None = None, start_s: float = 0.0):
        self.cores = cores
        self.clock = clock
        self.start_s = start_s

    def __call__(self, usable_cpus: int) -> FixedHost:  # constructed like a HostSampler
        self.usable_cpus = usable_cpus
        return self

    def start(self) -> None:
        if self.clock is not None:
            self.clock.burn(self.start_s)

    def stop(self) -> HostStats:
        return HostStats(
            cpu_pct=100.0 * self.cores / self.usable_cpus,
            cpu_cores_used=self.cores,
            peak_rss_mib=100.0,
            peak_pss_mib=80.0,
            peak_workers=0,
        )
