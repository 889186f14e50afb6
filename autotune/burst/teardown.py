"""Ending a burst: its DataLoader workers are gone when run_burst returns, whatever happened.

A worker killed mid-burst, a hung worker or an interrupt must not leave processes behind on a
shared node, nor let torch's SIGCHLD handler raise "worker killed" into code after the burst.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
from typing import Any, Iterator

from torch.utils.data._utils import signal_handling
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

# How long a killed worker gets to be reaped (SIGKILL cannot be caught: this is only the
# kernel's bookkeeping).
REAP_S = 2.0


_shield_depth = 0


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """A teardown in progress: a stop signal must not cut it short (it would leave workers
    behind); the signal's handler sees `tearing_down()` and only records the request."""
    global _shield_depth
    _shield_depth += 1
    try:
        yield
    finally:
        _shield_depth -= 1


def tearing_down() -> bool:
    return _shield_depth > 0


def _iterators(loader: Any, iterator: Any) -> list[Any]:
    found = [getattr(loader, "_iterator", None), iterator]
    unique: list[Any] = []
    for it in found:
        if it is not None and hasattr(it, "_shutdown_workers") and all(it is not u for u in unique):
            unique.append(it)
    return unique


def _stop_watching(iterator: Any) -> None:
    """From here on worker exits are ours: torch's SIGCHLD handler must not raise about them."""
    if getattr(iterator, "_worker_pids_set", False):
        signal_handling._remove_worker_pids(id(iterator))
        iterator._worker_pids_set = False


def release_loader(loader: Any, iterator: Any = None, *, force: bool = False) -> None:
    """Shut the workers of `loader` (persistent ones) and of `iterator` down now, instead of
    whenever the garbage collector gets to them (an exception's traceback can keep an iterator
    alive for long). `force`: kill them first, for a burst that failed: they may be hung, and a
    graceful shutdown waits 5 s for each hung worker before terminating it."""
    for it in _iterators(loader, iterator):
        workers = list(getattr(it, "_workers", ()))
        _stop_watching(it)
        if force:
            for worker in workers:
                worker.kill()
            _abandon(it)
        else:
            it._shutdown_workers()
        for worker in workers:  # torch only terminates; a worker may ignore SIGTERM
            if worker.is_alive():
                worker.kill()
            worker.join(timeout=REAP_S)
    if hasattr(loader, "_iterator"):
        loader._iterator = None


def _abandon(iterator: Any) -> None:
    """torch's shutdown for an iterator whose workers were killed, less its waits on them.

    torch's own `_shutdown_workers` sets the workers' done event, an Event whose lock a worker
    takes each time it checks the event: killed at that moment, it holds the lock forever and the
    set() never returns. So this touches nothing a worker shares, except queues that are never
    waited on again (their feeder threads are told not to be joined at exit)."""
    iterator._shutdown = True  # torch's __del__ then does nothing
    index_queues = list(getattr(iterator, "_index_queues", ()))
    results = getattr(iterator, "_worker_result_queue", None)
    if hasattr(iterator, "_pin_memory_thread"):
        # As torch does: the pin thread checks this (thread) event between reads, and the item
        # put wakes a read in progress. The put never blocks here: the queue's feeder thread
        # sends it, and it is not joined (below).
        iterator._pin_memory_thread_done_event.set()
        if results is not None:
            results.put((None, None))
        iterator._pin_memory_thread.join(timeout=REAP_S)
    for queue in [*index_queues, *([results] if results is not None else [])]:
        queue.cancel_join_thread()
    for queue in index_queues:
        queue.close()


@contextlib.contextmanager
def no_strays() -> Iterator[None]:
    """Whatever happens inside, worker processes started inside are gone on exit. The back-stop
    for release_loader: a time limit firing inside `iter(loader)` interrupts the iterator while
    it starts its workers, before anyone holds a reference to shut them down with."""
    before = set(multiprocessing.active_children())
    try:
        yield
    finally:
        with shielded():
            # active_children() also reaps those that ended already (no zombie left behind).
            strays = set(multiprocessing.active_children()) - before
            owners = _owners(strays) if strays else []
            for it in owners:
                _stop_watching(it)
            for proc in strays:
                proc.kill()
                proc.join(timeout=REAP_S)
            for it in owners:
                # When collected, an owner would shut down as torch does: set its killed
                # workers' done event, whose lock one of them may hold.
                _abandon(it)


def _owners(procs: set[Any]) -> list[Any]:
    """The iterators, reachable or not, whose workers are among `procs`: their SIGCHLD watch
    must end before the workers are killed, and their own shutdown must not run after. Rare (a
    stray is an accident), so a gc scan is fine."""
    return [
        o
        for o in gc.get_objects()
        if issubclass(type(o), _MultiProcessingDataLoaderIter)
        and any(w in procs for w in getattr(o, "_workers", ()))
    ]
