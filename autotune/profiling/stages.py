"""Per-stage timing inside the DataLoader's workers, added from the outside for one profiling run.

The workload's dataset and collate_fn are wrapped, never changed: the dataset in a `TimedDataset`
(its `__getitem__` as a whole), and where a common structure is recognised, shallow copies with
their parts wrapped in `Timed`: a torchvision DatasetFolder's (ImageFolder's) loader
(`load/decode`), any dataset's `transform` (each child of a `Compose` or `transforms.v2.Compose` on
its own) and `target_transform`. Datasets that hold another under `.dataset` (Subset, a repeating
wrapper) are looked through. A user's own Dataset gets `__getitem__` against collate at least.

Each process (the main one with num_workers=0, else every worker, forked, forkserver-started or
spawned alike: the wrappers are module-level classes and pickle) adds per stage a count, wall and
thread-CPU seconds into its own `Recorder`, which writes them to `<dir>/stages-<pid>.json` every
FLUSH_S and when the process exits (a multiprocessing finalizer: torch's workers exit through
multiprocessing's bootstrap, which runs them). The main process reads the files after the
workers are gone. Each process's first batch is its warm-up and not counted (first calls import
and allocate). The cost is one perf_counter and one thread_time pair per stage per item.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from torch.utils.data import IterableDataset, default_collate

from autotune.profiling.stage_recorder import recorder
from autotune.strenum import StrEnum
from autotune.workload.base import Workload


class StageKind(StrEnum):
    DECODE = "decode"  # a DatasetFolder's loader: read the file and decode it
    TRANSFORM = "transform"  # one transform (a Compose's child, or a transform as a whole)
    FETCH = "fetch"  # __getitem__ as a whole (or what of it the recognised stages leave)
    COLLATE = "collate"


# Stage names the table treats specially.
GETITEM = "__getitem__"
COLLATE = "collate"
LOAD = "load/decode"


@dataclass(frozen=True)
class Stage:
    name: str
    kind: StageKind
    transform: str | None = None  # the transform's class name, for advice


@dataclass
class StagePlan:
    """What was wrapped, in pipeline order: the stages inside __getitem__, then the two outer
    ones."""

    inner: list[Stage] = field(default_factory=list)
    batched: bool = False  # the dataset has __getitems__: one call fetches a whole batch
    structure: str = "Dataset"  # what was recognised, e.g. "Repeated > ImageFolder > Compose"

    def add(self, name: str, kind: StageKind, transform: str | None = None) -> str:
        taken = {s.name for s in self.inner}
        unique, n = name, 1
        while unique in taken:  # the same transform class twice in one Compose
            n += 1
            unique = f"{name} #{n}"
        self.inner.append(Stage(unique, kind, transform))
        return unique


# -- the wrappers (module-level classes: they pickle for spawn and forkserver) ----------------
def _since(t0: float, c0: float) -> tuple[float, float]:
    """Wall and thread-CPU seconds since (t0, c0), read CPU first. thread_time is a system call,
    and a busy machine preempts a process on its way back from one: read after the wall clock, a
    preemption there fell between the stages (on 2 CPUs beside a training step, 0.6 ms an item of
    an 'other' that never ran). Read before it, it stays inside the stage it interrupted, as
    perf_counter-then-thread_time at the start already keeps it."""
    cpu = time.thread_time() - c0
    return time.perf_counter() - t0, cpu


class Timed:
    """`fn` called as before, its wall and CPU time added to stage `name` in this process."""

    def __init__(self, fn: Callable[..., Any], name: str, directory: str, ends_batch: bool = False):
        self.fn, self.name, self.directory, self.ends_batch = fn, name, directory, ends_batch

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return self.fn(*args, **kwargs)
        finally:
            rec = recorder(self.directory)
            rec.add(self.name, *_since(t0, c0))
            if self.ends_batch:
                rec.end_batch()

    def __repr__(self) -> str:
        return f"Timed({self.name!r}, {self.fn!r})"


class TimedDataset:
    """A map-style dataset whose __getitem__ is timed as a whole; everything else is the
    wrapped dataset's."""

    def __init__(self, dataset: Any, directory: str):
        self.dataset, self.directory = dataset, directory

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return self.dataset[index]
        finally:
            recorder(self.directory).add(GETITEM, *_since(t0, c0))

    def __getattr__(self, name: str) -> Any:
        if name in ("dataset", "directory"):  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.dataset, name)


class TimedBatchDataset(TimedDataset):
    """The same for a dataset with `__getitems__` (torch then fetches a batch in one call)."""

    def __getitems__(self, indices: list[Any]) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return self.dataset.__getitems__(indices)
        finally:
            recorder(self.directory).add(GETITEM, *_since(t0, c0), count=len(indices))


class TimedIterable(IterableDataset):
    """An iterable-style dataset: each item's production (next()) is the fetch stage."""

    def __init__(self, dataset: Any, directory: str):
        self.dataset, self.directory = dataset, directory

    def __iter__(self) -> Iterator[Any]:
        items = iter(self.dataset)
        while True:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                item = next(items)
            except StopIteration:
                return
            recorder(self.directory).add(GETITEM, *_since(t0, c0))
            yield item


# -- recognising the structure ----------------------------------------------------------------
def compose_types() -> tuple[type, ...]:
    from torchvision import transforms
    from torchvision.transforms import v2

    return (transforms.Compose, v2.Compose)


def _folder_type() -> type[Any]:
    from torchvision.datasets import DatasetFolder

    return DatasetFolder


def _timed_transform(transform: Callable, plan: StagePlan, directory: str) -> Any:
    """A copy of `transform` with each Compose child timed, or the transform timed as a whole."""
    if isinstance(transform, compose_types()):
        compose: Any = transform  # a Compose (torchvision has no type information)
        timed = copy.copy(compose)  # the user's Compose keeps its own list
        timed.transforms = [
            _timed_transform(child, plan, directory) for child in compose.transforms
        ]
        return timed
    kind_name = type(transform).__name__
    return Timed(transform, plan.add(kind_name, StageKind.TRANSFORM, kind_name), directory)


def _timed_parts(dataset: Any, plan: StagePlan, directory: str, depth: int = 0) -> Any:
    """A shallow copy of `dataset` with its recognised parts timed; `dataset` itself if none is."""
    parts: dict[str, Any] = {}
    names = [type(dataset).__name__]
    if isinstance(dataset, _folder_type()) and callable(getattr(dataset, "loader", None)):
        parts["loader"] = Timed(dataset.loader, plan.add(LOAD, StageKind.DECODE), directory)
    if callable(getattr(dataset, "transform", None)):
        parts["transform"] = _timed_transform(dataset.transform, plan, directory)
        names.append(type(dataset.transform).__name__)
    if callable(getattr(dataset, "target_transform", None)):
        parts["target_transform"] = Timed(
            dataset.target_transform,
            plan.add(
                "target_transform", StageKind.TRANSFORM, type(dataset.target_transform).__name__
            ),
            directory,
        )
    inner = getattr(dataset, "dataset", None)
    if inner is not None and depth < 4 and not parts:  # Subset, a repeating or caching wrapper
        timed_inner = _timed_parts(inner, plan, directory, depth + 1)
        if timed_inner is not inner:
            parts["dataset"] = timed_inner
            names.append(plan.structure)
    plan.structure = " > ".join(names)
    if not parts:
        return dataset
    timed = copy.copy(dataset)
    for name, part in parts.items():
        setattr(timed, name, part)
    return timed


def timed_workload(workload: Workload, directory: Path) -> tuple[Workload, StagePlan]:
    """A copy of `workload` whose dataset and collate_fn record their stages into `directory`.
    The workload and its dataset, transforms and collate_fn are left as they were."""
    directory.mkdir(parents=True, exist_ok=True)
    where = str(directory)
    plan = StagePlan()
    dataset = workload.dataset
    if isinstance(dataset, IterableDataset):
        wrapped: Any = TimedIterable(_timed_parts(dataset, plan, where), where)
    else:
        inner = _timed_parts(dataset, plan, where)
        plan.batched = callable(getattr(dataset, "__getitems__", None))
        wrapped = (TimedBatchDataset if plan.batched else TimedDataset)(inner, where)
    collate = Timed(workload.collate_fn or default_collate, COLLATE, where, ends_batch=True)
    return replace(workload, dataset=wrapped, collate_fn=collate), plan
