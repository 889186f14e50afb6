"""The loader ceiling: the DataLoader alone, iterated as fast as it delivers, no step at all.

Measured per worker count, with the CPU time the workers and the main process spend: a worker
that burns a core per item is CPU-bound and stops scaling at the core count, one that mostly
waits (storage latency) keeps scaling past it.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Iterator

from autotune.burst.pacing import drain_prefetched
from autotune.burst.runner import endless_batches
from autotune.burst.teardown import no_strays, release_loader
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostSampler
from autotune.transfer.move import batch_samples
from autotune.workload.base import Workload


@dataclass(frozen=True)
class LoaderProbe:
    workers: int
    samples_per_s: float
    window_s: float
    samples: int
    tree_cores: float  # CPU of main process plus workers, per second of the window
    main_cores: float  # CPU of the main process alone (receiving, collating when workers=0)
    duration_s: float = 0.0  # the whole probe: start-up, window and teardown
    # The main thread's CPU per batch: with workers, what receiving a batch from them costs the
    # training process (the host sampler's thread, in the same process, is left out).
    receive_ms_per_batch: float | None = None

    @property
    def worker_cores(self) -> float:
        return max(0.0, self.tree_cores - self.main_cores)

    @property
    def cpu_s_per_sample(self) -> float:
        """CPU seconds the loader spends on one sample, wherever it runs."""
        return self.tree_cores / self.samples_per_s if self.samples_per_s > 0 else 0.0


def loader_rate(
    workload: Workload,
    config: LoaderConfig,
    *,
    min_seconds: float,
    min_batches: int,
    usable_cpus: int,
) -> LoaderProbe:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        loader = workload.make_loader(config)
        batches = endless_batches(loader)
        with no_strays():
            try:
                probe = _measure(batches, workload, config, min_seconds, min_batches, usable_cpus)
            finally:
                batches.close()
                release_loader(loader)
    return replace(probe, duration_s=time.perf_counter() - t0)


def _measure(
    batches: Iterator[Any],
    workload: Workload,
    config: LoaderConfig,
    min_seconds: float,
    min_batches: int,
    usable_cpus: int,
) -> LoaderProbe:
    next(batches)  # worker start-up
    # Started before the drain: its first sample reads every process's PSS (tens of milliseconds
    # or more on a busy machine), and workers producing meanwhile would give the window a head
    # start (a rate above what the items allow).
    host = HostSampler(usable_cpus)
    host.start()
    try:
        # The workers filled their buffer during start-up: pull it empty so the window sees
        # the rate batches are produced at, not the rate a full buffer is emptied at.
        drain_prefetched(batches, config.prefetch_depth)
        cpu0, thread0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
        samples = count = 0
        while count < min_batches or time.perf_counter() - t0 < min_seconds:
            samples += batch_samples(next(batches), workload.batch_size)
            count += 1
        window = time.perf_counter() - t0
        main_cpu, thread_cpu = time.process_time() - cpu0, time.thread_time() - thread0
    finally:
        stats = host.stop()
    return LoaderProbe(
        workers=config.num_workers,
        samples_per_s=samples / window,
        window_s=window,
        samples=samples,
        tree_cores=stats.cpu_cores_used,
        main_cores=main_cpu / window,
        receive_ms_per_batch=1000 * thread_cpu / count,
    )
