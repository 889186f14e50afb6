"""Deliberately hostile workloads: each breaks the DataLoader the way users report it breaking.

Used by the tests/test_robust_*.py suite, in-process and as `tests/hostile_workloads.py:NAME`
workload specs for the CLI. Items are tiny tensors and the step a short sleep, so bursts are
cheap; `shuffle=False` makes which item a burst reaches, and when, deterministic.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Callable

import torch
from torch.utils.data import Dataset, get_worker_info

from autotune.workload.base import Workload
from autotune.workload.simulated import SleepStep

LENGTH = 512
BATCH = 8
SHAPE = (3, 8, 8)
STEP_S = 0.002
FOREVER_S = 3600.0
SLOW_ITEM_S = 0.004
SLOW_STEP_S = 0.02
SLUGGISH_ITEM_S = 0.05
LEAK_BYTES = 1024 * 1024  # kept per item by each leaking worker
LEAK_STEP_S = 0.01  # a slower step: fewer items per burst, so the leak stays tens of MiB


def worker_id() -> int | None:
    info = get_worker_info()
    return None if info is None else info.id


class Items(Dataset):
    """Well-behaved items; subclasses misbehave in `before(index)`."""

    def __len__(self) -> int:
        return LENGTH

    def before(self, index: int) -> None:
        pass

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        self.before(index)
        return torch.full(SHAPE, float(index % 7)), index % 10


class RaisesInWorkers(Items):
    """Every 5th item raises, but only in a DataLoader worker: PyTorch's defaults (no workers)
    work, every worker pool fails."""

    def before(self, index: int) -> None:
        if worker_id() is not None and index % 5 == 3:
            raise ValueError(f"hostile item {index} refuses to load in a worker")


class RaisesEverywhere(Items):
    """Item 13 raises wherever it is loaded: after the probe batch (items 0-7), every burst
    reaches it. The workload is broken."""

    def before(self, index: int) -> None:
        if index == 13:
            raise ValueError("hostile item 13 is corrupt")


class Ragged(Items):
    """Items of different sizes: collating a batch fails in every configuration."""

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        return torch.zeros(3, 8 + index % 3, 8), index % 10


class Leaks(Items):
    """Each worker keeps memory for every item it loads, as copy-on-read and caches do
    (pytorch#13246): the pool's footprint grows with the items served. Items take a while, so
    that pools are worth trying (without workers the step would wait on loading)."""

    def __init__(self) -> None:
        self.hoard: list[bytes] = []

    def before(self, index: int) -> None:
        if worker_id() is not None:
            self.hoard.append(b"x" * LEAK_BYTES)  # written, so the pages really are resident
        time.sleep(SLOW_ITEM_S)


class HangsInWorkers(Items):
    """Item 20 sleeps forever in a worker: the pool stalls, the main process waits."""

    def before(self, index: int) -> None:
        if worker_id() is not None and index == 20:
            time.sleep(FOREVER_S)


class HangsEverywhere(Items):
    """Item 20 sleeps forever wherever it is loaded, the main process included (num_workers=0)."""

    def before(self, index: int) -> None:
        if index == 20:
            time.sleep(FOREVER_S)


class KillsItsWorker(Items):
    """Worker 1 dies by SIGKILL on its first item, as under the OOM killer. Pools of one worker
    survive."""

    def before(self, index: int) -> None:
        if worker_id() == 1:
            os.kill(os.getpid(), signal.SIGKILL)


class ShmFull(Items):
    """Workers fail the way torch does when /dev/shm is full (Docker's 64 MiB default)."""

    def before(self, index: int) -> None:
        if worker_id() is not None:
            raise RuntimeError(
                f"unable to write to file </torch_{os.getpid()}_{index}>:"
                " No space left on device (28)"
            )


class Slow(Items):
    """Well-behaved, with items that take a while: for tests that act during a burst."""

    def before(self, index: int) -> None:
        time.sleep(SLOW_ITEM_S)


class Sluggish(Items):
    """Items so slow that a worker's first batch takes longer than a test needs to act: a worker
    killed within its pool's first 0.4 s dies before the burst can have finished with it. (With
    `Slow`, a whole burst could be over in 0.75 s, before a kill at a busy machine's pace.)"""

    def before(self, index: int) -> None:
        time.sleep(SLUGGISH_ITEM_S)


class Sized(Items):
    def __init__(self, length: int):
        self.length = length

    def __len__(self) -> int:
        return self.length


def factory(
    make_dataset: Callable[[], Dataset],
    name: str,
    *,
    step_s: float = STEP_S,
    batch_size: int = BATCH,
) -> Callable[[], Workload]:
    """A workload factory, as a `FILE.py:factory` spec names it: each call builds a fresh
    dataset."""

    def make() -> Workload:
        return Workload(
            make_dataset(), batch_size, SleepStep(step_s), shuffle=False, name=name, device="cpu"
        )

    make.__name__ = name.replace("-", "_")
    return make


raises_in_workers = factory(RaisesInWorkers, "raises-in-workers")
raises_everywhere = factory(RaisesEverywhere, "raises-everywhere")
ragged = factory(Ragged, "ragged")
leaks = factory(Leaks, "leaks", step_s=LEAK_STEP_S)
hangs_in_workers = factory(HangsInWorkers, "hangs-in-workers")
hangs_everywhere = factory(HangsEverywhere, "hangs-everywhere")
kills_its_worker = factory(KillsItsWorker, "kills-its-worker")
shm_full = factory(ShmFull, "shm-full")
slow = factory(Slow, "slow", step_s=SLOW_STEP_S)
sluggish = factory(Sluggish, "sluggish", step_s=SLOW_STEP_S)

# Bad input: factories that cannot give a usable Workload.
empty = factory(lambda: Sized(0), "empty")
smaller_than_a_batch = factory(lambda: Sized(BATCH - 1), "smaller-than-a-batch")
zero_batch = factory(Items, "zero-batch", batch_size=0)


def not_a_workload() -> Dataset:
    return Items()


def factory_raises() -> Workload:
    raise FileNotFoundError("/data/train: no such dataset")
