"""Workers and memory are released after every burst: a sweep of many bursts must not grow the
tuner's memory or leave processes behind."""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.queues
import queue
import threading
import time
from types import SimpleNamespace

import psutil
import pytest
import torch
from robust_support import child_pids
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

from autotune.burst.runner import BurstSettings, run_burst
from autotune.burst.teardown import release_loader
from autotune.burst.watchdog import BurstTimeout
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import MIB
from autotune.workload.base import Workload
from autotune.workload.simulated import SimSpec, simulated_workload

BURSTS = 50
WARM_BURSTS = 10  # allocator and import caches settle in the first bursts
# Growth allowed over 40 bursts after the warm-up: far below one leaked worker pool or batch
# buffer per burst, which is what a leak here would look like.
MAX_GROWTH_MIB = 32

CONFIGS = (
    LoaderConfig(),
    LoaderConfig(num_workers=1, prefetch_factor=2),
    LoaderConfig(num_workers=2, prefetch_factor=1, persistent_workers=True),
    LoaderConfig(num_workers=2),
)


def test_fifty_bursts_leave_no_process_and_no_memory_behind():
    workload = simulated_workload(
        SimSpec(cpu_ms=0.2, step_ms=1, batch=8, shape=(3, 8, 8), length=256)
    )
    settings = BurstSettings(
        min_steps=2, min_seconds=0.02, max_seconds=0.1, warmup_steps=1, time_limit_s=10
    )
    me = psutil.Process()
    before = child_pids()
    rss_warm = None
    for i in range(BURSTS):
        result = run_burst(workload, CONFIGS[i % len(CONFIGS)], torch.device("cpu"), settings)
        # The burst ran (its 0.1 s cap may end it before min_steps on a loaded machine: the cap
        # wins, by design; what this test checks is what is left behind).
        assert result.steps >= 1
        # New children only: one that an earlier test left may end (and leave the set) meanwhile.
        assert not child_pids() - before, f"workers left behind after burst {i}"
        if i == WARM_BURSTS - 1:
            rss_warm = me.memory_info().rss / MIB
    growth = me.memory_info().rss / MIB - rss_warm
    assert growth < MAX_GROWTH_MIB, f"RSS grew {growth:.1f} MiB over {BURSTS - WARM_BURSTS} bursts"


class SlowToStartSampler(torch.utils.data.Sampler):
    """Its first index comes late: torch asks for it inside `iter(loader)`, after starting the
    workers, so a time limit firing then interrupts the iterator before anyone holds it."""

    def __init__(self, length: int):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __iter__(self):
        time.sleep(2.0)
        return iter(range(self.length))


def test_a_time_limit_inside_worker_start_up_leaves_no_worker_behind():
    sim = simulated_workload(SimSpec(cpu_ms=0.1, step_ms=1, batch=8, shape=(3, 8, 8), length=64))
    workload = Workload(
        sim.dataset,
        sim.batch_size,
        sim.step,
        sampler=SlowToStartSampler(64),
        name="slow-to-start",
        device="cpu",
    )
    settings = BurstSettings(
        min_steps=2, min_seconds=0.02, max_seconds=0.1, warmup_steps=1, time_limit_s=0.5
    )
    before = child_pids()
    with pytest.raises(BurstTimeout) as caught:
        run_burst(workload, LoaderConfig(num_workers=2), torch.device("cpu"), settings)
    assert not child_pids() - before
    # The interrupted iterator, kept alive by the traceback: when collected, it must not set its
    # killed workers' done event (whose lock one of them may hold) as torch's shutdown does.
    interrupted = [
        o
        for o in gc.get_objects()
        if issubclass(type(o), _MultiProcessingDataLoaderIter)
        and o._workers
        and not any(w.is_alive() for w in o._workers)
    ]
    assert interrupted and all(o._shutdown for o in interrupted)
    del caught


def test_a_forced_release_returns_although_a_killed_worker_holds_the_done_events_lock():
    """A worker checks its done event under the event's lock; killed right then, it holds the
    lock for ever. Holding it here stands for that worker: torch's graceful shutdown, which sets
    the event, would wait on it for ever."""
    sim = simulated_workload(SimSpec(cpu_ms=0.1, step_ms=1, batch=8, shape=(3, 8, 8), length=64))
    loader = torch.utils.data.DataLoader(sim.dataset, batch_size=8, num_workers=2)
    iterator = iter(loader)
    next(iterator)
    workers = list(iterator._workers)
    lock = iterator._workers_done_event._cond
    lock.acquire()
    released = threading.Event()

    def release() -> None:
        release_loader(loader, iterator, force=True)
        released.set()

    thread = threading.Thread(target=release, daemon=True)
    try:
        thread.start()
        # Not a timing: a release that waits on the lock never sets the event at all.
        assert released.wait(timeout=60), "the forced release waited on a killed worker's lock"
    finally:
        lock.release()
        thread.join(timeout=60)
    assert not any(w.is_alive() for w in workers)


def test_a_forced_release_ends_a_pin_memory_thread_waiting_on_its_queue():
    """The pin thread (CUDA only, so a stand-in here) reads the workers' results with a 5 s
    timeout and checks its done event between reads: the forced release wakes it, as torch's
    shutdown does, instead of leaving it blocked past the release."""
    results: multiprocessing.queues.Queue = multiprocessing.Queue()
    done = threading.Event()

    def pin_loop() -> None:  # torch's _pin_memory_loop, less the pinning
        while not done.is_set():
            try:
                results.get(timeout=5.0)
            except queue.Empty:
                continue

    thread = threading.Thread(target=pin_loop, daemon=True)
    thread.start()
    iterator = SimpleNamespace(
        _shutdown_workers=None,
        _workers=[],
        _index_queues=[multiprocessing.Queue()],
        _worker_result_queue=results,
        _pin_memory_thread=thread,
        _pin_memory_thread_done_event=done,
    )
    release_loader(None, iterator, force=True)
    assert iterator._shutdown and not thread.is_alive()
