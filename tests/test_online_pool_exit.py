"""The pools autotune runs end when the script is done with them, as torch's own would: when the
script drops its loader, and at exit before torch's atexit joins of a pinned persistent pool's
workers (each waits 5 s for a worker never told to stop: results/gpu/2026-11-27-h200-night.md)."""

from __future__ import annotations

import gc
import multiprocessing
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import torch

import autotune
from autotune.online import inner
from autotune.online.inner import (
    TORCH_DATALOADER,
    stop_pools,
    stopped_before_torch_exits,
    timed,
    unwatched,
)


class Items(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 32

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.full((4,), float(index))


def _new_children(before: set[Any]) -> list[Any]:
    return [p for p in multiprocessing.active_children() if p not in before]


@pytest.fixture
def no_gc():
    """Only reference counts free objects: a cycle would keep them until a collection."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_timed_pool_stops_when_its_loader_is_dropped(no_gc):
    before = set(multiprocessing.active_children())
    loader = TORCH_DATALOADER(Items(), batch_size=4, num_workers=2, persistent_workers=True)
    iterator = iter(loader)
    timed(iterator, 30.0)
    assert len(list(iterator)) == 8  # the wrapped _try_get_data delivers every batch
    assert len(_new_children(before)) == 2
    del loader, iterator
    assert _new_children(before) == []


def test_a_tuned_loader_dropped_by_the_script_leaves_no_worker(no_gc, tmp_path):
    before = set(multiprocessing.active_children())

    def train() -> int:
        loader = autotune.DataLoader(
            Items(),
            batch_size=4,
            num_workers=2,
            persistent_workers=True,
            online={"results_dir": tmp_path, "memory": "off"},
        )
        return sum(len(batch) for _ in range(3) for batch in loader)

    assert train() == 3 * 32
    assert _new_children(before) == []


class FakePool:
    def __init__(self, pinned: bool = True, persistent: bool = True):
        self._pin_memory, self._persistent_workers = pinned, persistent
        self.stopped = 0

    def _shutdown_workers(self) -> None:
        self.stopped += 1


@pytest.fixture
def handlers(monkeypatch):
    """atexit as a list: what is registered, in order."""
    registered: list[Any] = []

    def unregister(handler: Any) -> None:
        while handler in registered:
            registered.remove(handler)

    monkeypatch.setattr(inner.atexit, "register", registered.append)
    monkeypatch.setattr(inner.atexit, "unregister", unregister)
    monkeypatch.setattr(inner, "_pools_owner", [])
    return registered


def test_a_pinned_persistent_pool_is_stopped_by_the_last_handler_registered(handlers):
    first, second, plain = FakePool(), FakePool(), FakePool(pinned=False)
    stopped_before_torch_exits(first)
    handlers.append("torch's join of the second pool's workers")
    stopped_before_torch_exits(second)
    stopped_before_torch_exits(plain)  # torch registers no join for it: nothing to get ahead of
    assert handlers == ["torch's join of the second pool's workers", stop_pools]
    stop_pools()
    assert (first.stopped, second.stopped, plain.stopped) == (1, 1, 0)


def test_a_forked_child_does_not_stop_its_parents_pools(handlers, monkeypatch):
    pool = FakePool()
    stopped_before_torch_exits(pool)
    monkeypatch.setattr(inner.os, "getpid", lambda: -1)
    stop_pools()
    assert pool.stopped == 0


# A script whose loader is still alive at exit (a module-level one). torch before 2.14 registers,
# for a pinned persistent pool, an atexit join of each worker (torch 2.14 shuts such pools down
# at exit itself); here that join, registered as torch registered it, reports whether the worker
# was still running when it came.
SCRIPT = """
import atexit, sys
from autotune.online.inner import TORCH_DATALOADER, stopped_before_torch_exits

def join(w):  # torch's join, without its 5 s wait for a worker still running
    print("alive at torch's join:", w.is_alive(), flush=True)
    w.terminate()

loader = TORCH_DATALOADER(list(range(16)), batch_size=4, num_workers=2, persistent_workers=True,
                          pin_memory={pin})
iterator = iter(loader)
for w in iterator._workers:  # as torch before 2.14 registers them for a pinned pool
    atexit.register(join, w)
list(iterator)
iterator._pin_memory = True  # where no GPU pins it: a pool torch would have registered joins for
if sys.argv[1] == "autotune":
    stopped_before_torch_exits(iterator)
"""


def _joins(tmp_path, who: str, pin: bool) -> list[str]:
    script = tmp_path / "exits.py"
    script.write_text(textwrap.dedent(SCRIPT.format(pin=pin)))
    done = subprocess.run(
        [sys.executable, str(script), who], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("alive")]


def test_at_exit_the_pool_has_stopped_before_torchs_joins(tmp_path):
    assert _joins(tmp_path, "torch", pin=False) == ["alive at torch's join: True"] * 2
    assert _joins(tmp_path, "autotune", pin=False) == ["alive at torch's join: False"] * 2


@pytest.mark.gpu
def test_at_exit_a_pinned_pool_has_stopped_before_torchs_joins(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("pinned memory needs a GPU")
    assert _joins(tmp_path, "torch", pin=True) == ["alive at torch's join: True"] * 2
    assert _joins(tmp_path, "autotune", pin=True) == ["alive at torch's join: False"] * 2


class SilentPool:
    """torch's `_try_get_data` contract: wait up to `timeout` for a batch; (False, None) if none
    came. This one never has a batch, and says at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def _try_get_data(self, timeout: float = 5.0) -> tuple[bool, Any]:
        self.waits.append(timeout)
        return False, None


def test_a_timed_pool_waits_no_longer_than_its_timeout_at_each_look():
    """torch waits its status-check interval (5 s) per look: a 1 s timeout would be found 5 s
    late. A wait the caller gives is kept."""
    pool = SilentPool()
    timed(pool, 1.0)
    pool._try_get_data()
    pool._try_get_data(timeout=3.0)
    assert pool.waits[0] <= 1.0 and pool.waits[1] == 3.0


def test_a_tuned_pool_shuts_down_as_torchs_when_collected(no_gc, monkeypatch):
    """A tuned pool's iterator marks dead workers its own way (inner.unwatched); collected by the
    garbage collector (in a reference cycle: a traceback, a framework's bookkeeping), which
    clears weak references to it before its __del__ runs, its shutdown raises no error."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    loader = TORCH_DATALOADER(Items(), batch_size=4, num_workers=2)
    iterator = iter(loader)
    unwatched(iterator)
    next(iterator)  # mid-epoch: its workers are still up when it is dropped
    iterator.cycle = iterator
    # Kept out of the garbage: collected with it, they would close before its workers are told
    # to stop, and each worker would be waited on for 5 s (torch's, with or without autotune).
    queues = list(iterator._index_queues)
    del loader, iterator
    gc.collect()
    del queues
    assert unraisable == []


def test_a_tuned_pool_shuts_its_workers_down_as_torchs_does():
    before = set(multiprocessing.active_children())
    iterator = iter(TORCH_DATALOADER(Items(), batch_size=4, num_workers=2))
    unwatched(iterator)
    assert isinstance(iterator, torch.utils.data.dataloader._MultiProcessingDataLoaderIter)
    next(iterator)
    iterator._shutdown_workers()
    assert _new_children(before) == []
