"""How the dataset's items are fetched, measured in the main process before the search.

One batch of indices, fetched as torch's map-style fetcher would (`__getitems__` where the
dataset has it, else `__getitem__` per item, then the collate_fn), and, where both exist, the
other way too, on the same indices: per item against batched. A `TensorDataset` has no
`__getitems__`, but its batched path is known: one indexing per tensor. Both ways must give the
same batch (tensor for tensor), or the batched figure is dropped. Each way is timed best of a few,
wall and thread CPU.

From it: items fetched in microseconds while on the CPU (no storage wait) come from memory, and
the training process's cost of fetching a batch itself is what a worker must undercut, since the
training process then still receives every batch from the worker (measured by the 1-worker loader
probe: its main-process CPU per batch).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch
from torch.utils.data import IterableDataset, Subset, TensorDataset, default_collate

from autotune.strenum import StrEnum
from autotune.workload.base import Workload

REPEATS = 3
# A way that takes microseconds is repeated for at least MIN_PROBE_S: the fastest of many runs
# misses the preemptions of a busy machine, which that long a sample takes in. Repeats stop once a
# way has taken MAX_PROBE_S: a slow dataset (a batch of JPEGs) gets one pass.
MIN_PROBE_S = 0.05
MAX_PROBE_S = 0.25
MAX_REPEATS = 200
# Items fetched faster than this, on the CPU at least ON_CPU of the time, come from memory: what a
# worker's hand-over of a batch costs the training process is of the same order (microseconds per
# small item; more for larger items).
IN_MEMORY_MS_PER_ITEM = 0.05
ON_CPU = 0.8
# A dataset without a batched way whose first item takes longer than this is not probed further
# (a batch of such items takes a real share of the budget to fetch once): receiving a batch from a
# worker costs the training process well under a millisecond per item.
SLOW_ITEM_MS = 5.0
# Per-item calls "dominate" a batch's fetch when the batched way saves at least this share.
DOMINATES = 0.5


class BatchedWay(StrEnum):
    GETITEMS = "__getitems__"  # the dataset's own: torch's fetcher already uses it
    SLICING = "tensor indexing"  # a TensorDataset's tensors indexed with the batch's indices


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float


def best_of(
    run: Callable[[], Any], repeats: int = REPEATS, max_s: float = float("inf"), min_s: float = 0.0
) -> tuple[Timing, Any]:
    """The fastest run, and the last run's output: `repeats` runs, more while they have taken less
    than `min_s` (up to MAX_REPEATS), fewer once they have taken `max_s`."""
    best, out, spent, runs = Timing(float("inf"), float("inf")), None, 0.0, 0
    while runs < repeats or (spent < min_s and runs < MAX_REPEATS):
        t0, c0 = time.perf_counter(), time.thread_time()
        out = run()
        cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
        spent, runs = spent + wall, runs + 1
        if wall < best.wall_s:
            best = Timing(wall, cpu)
        if spent >= max_s:
            break
    return best, out


def leaves(value: Any) -> list[Any]:
    """The tensors and scalars of a (nested) batch, in order: tuples and lists alike."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in leaves(value[key])]
    return [value]


def same_batch(a: Any, b: Any) -> bool:
    xs, ys = leaves(a), leaves(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys, strict=True):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (
                isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and torch.equal(x, y)
            ):
                return False
        elif x != y:
            return False
    return True


@dataclass(frozen=True)
class FetchProbe:
    items: int  # the batch's items, fetched each way
    per_item: Timing | None  # __getitem__ per item + collate (None: the dataset has no __getitem__)
    # The batched way where one applies (__getitems__ + collate; tensor indexing gives the batch
    # itself); None where none does or its batch differed from the per-item one.
    batched: Timing | None
    batched_way: BatchedWay | None
    # The training process's CPU to receive one batch from a worker (the 1-worker loader probe).
    receive_ms_per_batch: float | None = None

    @property
    def used(self) -> Timing:
        """The way torch's fetcher takes: __getitems__ where the dataset has it."""
        if self.batched_way == BatchedWay.GETITEMS and self.batched is not None:
            return self.batched
        assert self.per_item is not None  # measure_fetch returns None when neither was measured
        return self.per_item

    def ms_per_item(self, timing: Timing | None) -> float | None:
        return None if timing is None else 1000 * timing.wall_s / self.items

    @property
    def fetch_ms_per_batch(self) -> float:
        """What fetching one batch costs the training process when it has no workers."""
        return 1000 * self.used.wall_s

    @property
    def in_memory(self) -> bool:
        used = self.used
        on_cpu = used.cpu_s / used.wall_s if used.wall_s > 0 else 1.0
        return 1000 * used.wall_s / self.items <= IN_MEMORY_MS_PER_ITEM and on_cpu >= ON_CPU

    @property
    def workers_cannot_pay(self) -> bool:
        """Receiving a batch from a worker costs the training process at least as much as
        fetching it itself: no worker count can make loading cheaper for it."""
        return (
            self.receive_ms_per_batch is not None
            and self.receive_ms_per_batch >= self.fetch_ms_per_batch
        )

    @property
    def per_item_overhead_ms(self) -> float | None:
        """What calling per item adds to each item over the batched way."""
        per_item, batched = self.ms_per_item(self.per_item), self.ms_per_item(self.batched)
        return None if per_item is None or batched is None else per_item - batched

    @property
    def per_item_share(self) -> float | None:
        """The share of a per-item fetch that the batched way saves."""
        overhead, per_item = self.per_item_overhead_ms, self.ms_per_item(self.per_item)
        return None if overhead is None or not per_item else overhead / per_item

    @property
    def per_item_dominates(self) -> bool:
        return (self.per_item_share or 0.0) >= DOMINATES

    def as_dict(self) -> dict[str, Any]:
        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 6)  # in-memory items: microseconds

        return {
            "items": self.items,
            "per_item_ms_per_item": r(self.ms_per_item(self.per_item)),
            "batched_ms_per_item": r(self.ms_per_item(self.batched)),
            "batched_way": None if self.batched_way is None else str(self.batched_way),
            "per_item_overhead_ms": r(self.per_item_overhead_ms),
            "per_item_share_pct": None
            if self.per_item_share is None
            else round(100 * self.per_item_share, 1),
            "fetch_ms_per_batch": r(self.fetch_ms_per_batch),
            "receive_ms_per_batch": r(self.receive_ms_per_batch),
            "in_memory": self.in_memory,
            "workers_cannot_pay": self.workers_cannot_pay,
        }


def _batched_way(dataset: Any, indices: list[int]) -> tuple[BatchedWay, Callable[[], Any]] | None:
    # A Subset (random_split's) over a dataset without __getitems__ fetches per item through its
    # own __getitems__: it is looked through, to its tensors where they are a TensorDataset's.
    through = isinstance(dataset, Subset) and not callable(
        getattr(dataset.dataset, "__getitems__", None)
    )
    if callable(getattr(dataset, "__getitems__", None)) and not through:
        return BatchedWay.GETITEMS, lambda: dataset.__getitems__(indices)
    base = dataset.dataset if through else dataset
    if isinstance(base, TensorDataset):
        index = torch.as_tensor([dataset.indices[i] for i in indices] if through else indices)
        return BatchedWay.SLICING, lambda: tuple(t[index] for t in base.tensors)
    return None


def _slow_first_item(dataset: Any, index: int) -> bool:
    """The first item took longer than SLOW_ITEM_MS: far from memory speed, and a batch of such
    items costs more to fetch than to receive from a worker."""
    t0 = time.perf_counter()
    dataset[index]
    return 1000 * (time.perf_counter() - t0) > SLOW_ITEM_MS


@contextmanager
def one_thread() -> Iterator[None]:
    """torch's intra-op threads at one, as in a DataLoader worker (torch sets it there): a gather
    split over threads on a busy machine waits for the other threads' cores, which is contention,
    not fetching."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def measure_fetch(workload: Workload) -> FetchProbe | None:
    """One batch fetched per item and, where the dataset allows, batched; None for an
    iterable-style or unsized dataset."""
    with one_thread():
        return _measure(workload)


def _measure(workload: Workload) -> FetchProbe | None:
    dataset = workload.dataset
    if isinstance(dataset, IterableDataset) or not hasattr(dataset, "__len__"):
        return None
    n = min(workload.batch_size, len(dataset))
    # Random indices, as a shuffled epoch asks for them (fixed: the same batch in every tuning).
    indices = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(0))[:n].tolist()
    collate = workload.collate_fn or default_collate
    way = _batched_way(dataset, indices)
    if way is None and _slow_first_item(dataset, indices[0]):
        return None  # nothing to compare, and far from memory speed: the budget has better uses
    per_item = batched = None
    want = got = None
    if callable(getattr(dataset, "__getitem__", None)):
        per_item, want = best_of(
            lambda: collate([dataset[i] for i in indices]), max_s=MAX_PROBE_S, min_s=MIN_PROBE_S
        )
    if way is not None:
        kind, fetch = way
        # The slicing way returns the batch itself (no collate_fn runs: it would be given the
        # batch as a DataLoader with batch_size=None gives it); __getitems__ feeds the collate_fn.
        run = fetch if kind == BatchedWay.SLICING else (lambda: collate(fetch()))
        batched, got = best_of(run, max_s=MAX_PROBE_S, min_s=MIN_PROBE_S)
        if kind == BatchedWay.SLICING and (want is None or not same_batch(want, got)):
            way = batched = None  # not the same batch: nothing to compare
        elif want is not None and not same_batch(want, got):
            per_item = None  # __getitems__ is the dataset's own: its items are the truth
    if per_item is None and batched is None:
        return None
    return FetchProbe(n, per_item, batched, way[0] if way is not None else None)
