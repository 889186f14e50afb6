"""NVTX ranges for an `nsys profile autotune tune --nvtx ...` timeline.

The step's phases (wait, copy, compute) get ranges through the burst's phase hook. The DataLoader's
own work happens inside torch's fetchers, so those are monkey-patched at run time, as NVIDIA's
profiling talks do: a wrapper doing range_push/range_pop around each fetch (dataset items plus
collate) and around its collate. DataLoader workers forked while the patch is in place inherit it;
workers started with spawn/forkserver import torch afresh and emit no fetch ranges.
"""

from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Iterator

from torch.utils.data._utils import fetch as torch_fetch

from autotune.transfer.device_loader import PhaseHook

FETCHERS = (torch_fetch._MapDatasetFetcher, torch_fetch._IterableDatasetFetcher)
# Ranges the main process opens per step (wait, copy, compute); each worker adds fetch + collate.
STEP_RANGES = 3
WORKER_RANGES_PER_BATCH = 2


def load_nvtx() -> ModuleType | None:
    """torch.cuda.nvtx where this torch build can call NVTX, else None. Without a tool such as
    nsys attached the calls do nothing but still cost their call overhead."""
    try:
        from torch.cuda import nvtx

        nvtx.range_push("autotune")
        nvtx.range_pop()
    except Exception:  # CPU-only torch builds raise on the first call
        return None
    return nvtx


@contextlib.contextmanager
def _range(nvtx: Any, name: str) -> Iterator[None]:
    nvtx.range_push(name)
    try:
        yield
    finally:
        nvtx.range_pop()


def nvtx_phases(nvtx: Any) -> PhaseHook:
    """A phase hook that opens an NVTX range named after each phase."""
    return functools.partial(_range, nvtx)


def _ranged(nvtx: Any, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _range(nvtx, name):
            return fn(*args, **kwargs)

    return wrapper


def _ranged_fetch(nvtx: Any, fetch: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fetch)
    def wrapper(self: Any, index: Any) -> Any:
        collate = self.collate_fn
        self.collate_fn = _ranged(nvtx, "collate", collate)
        try:
            with _range(nvtx, "fetch"):
                return fetch(self, index)
        finally:
            self.collate_fn = collate

    return wrapper


@contextlib.contextmanager
def fetch_ranges(nvtx: Any) -> Iterator[None]:
    """Wrap every DataLoader fetch and collate in NVTX ranges while the context is open."""
    originals = {cls: cls.__dict__["fetch"] for cls in FETCHERS}
    for cls, original in originals.items():
        cls.fetch = _ranged_fetch(nvtx, original)  # type: ignore[method-assign]  # undone below
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.fetch = original  # type: ignore[method-assign]


@dataclass(frozen=True)
class NvtxCost:
    range_us: float  # one push/pop pair, measured here without a profiler attached
    step_ranges: int
    worker_ranges_per_batch: int


def range_cost(nvtx: Any, pairs: int = 20000) -> NvtxCost:
    t0 = time.perf_counter()
    for _ in range(pairs):
        nvtx.range_push("autotune.cost")
        nvtx.range_pop()
    per_pair = (time.perf_counter() - t0) / pairs
    return NvtxCost(1e6 * per_pair, STEP_RANGES, WORKER_RANGES_PER_BATCH)
