"""The inner loaders: torch's own DataLoader class (saved here, so that a
torch.utils.data.DataLoader patched to point at autotune's class does not recurse), one per
configuration, over the epoch's index stream. What they are built from is copied off the outer
loader once: they refer to nothing of it (see index_stream.Feed)."""

from __future__ import annotations

import atexit
import logging
import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Sized

import torch
import torch.utils.data.dataloader as torch_dataloader
from torch.utils.data import IterableDataset

from autotune.online.index_stream import Feed, StreamSampler
from autotune.space.config import LoaderConfig
from autotune.space.start_method import import_what_workers_import

log = logging.getLogger("autotune")

# torch's own class, even where torch.utils.data(.dataloader).DataLoader was replaced by a subclass.
TORCH_DATALOADER: type = next(
    c
    for c in torch_dataloader.DataLoader.__mro__
    if c.__module__ == torch_dataloader.__name__ and c.__name__ == "DataLoader"
)


@dataclass
class InnerLoaders:
    common: dict[str, Any]  # the outer loader's arguments every inner loader takes as they are
    multiprocessing_context: Any
    iterable: bool
    batch_size: int | None
    drop_last: bool
    generator: torch.Generator | None  # the user's: only an IterableDataset's loader draws from it
    auto_collation: bool
    index_sampler: Sized  # the user's (batch_)sampler, for len()
    candidate_timeout_s: float = 0.0  # a tuned pool's wait for a batch (timed(); 0: none)
    feed: Feed = field(default_factory=Feed)

    @classmethod
    def of(cls, loader: Any) -> InnerLoaders:
        common = dict(
            dataset=loader.dataset,
            collate_fn=loader.collate_fn,
            timeout=loader.timeout,
            worker_init_fn=loader.worker_init_fn,
            in_order=loader.in_order,
        )
        if loader.pin_memory_device:
            common["pin_memory_device"] = loader.pin_memory_device
        return cls(
            common,
            loader.multiprocessing_context,
            isinstance(loader.dataset, IterableDataset),
            loader.batch_size,
            loader.drop_last,
            loader.generator,
            loader._auto_collation,
            loader._index_sampler,
            loader.online.candidate_timeout_s,
        )

    def build(self, config: LoaderConfig, generator: torch.Generator | None) -> Any:
        """A torch DataLoader for `config`: over the feed's stream, its workers' base seed drawn
        from `generator`; for an IterableDataset, torch's own stream and the user's generator."""
        kwargs = {**self.common, **config.dataloader_kwargs()}
        import_what_workers_import(config.num_workers)
        if config.num_workers > 0 and self.multiprocessing_context is not None:
            kwargs["multiprocessing_context"] = self.multiprocessing_context
        if self.iterable:
            return TORCH_DATALOADER(
                batch_size=self.batch_size,
                drop_last=self.drop_last,
                generator=self.generator,
                **kwargs,
            )
        sampler = StreamSampler(self.feed, self.index_sampler)
        if self.auto_collation:
            kwargs["batch_sampler"] = sampler
        else:
            kwargs.update(sampler=sampler, batch_size=None)
        return TORCH_DATALOADER(generator=generator, **kwargs)


def unwatched(iterator: Any) -> None:
    """Take a tuned configuration's workers off torch's SIGCHLD watch. torch raises a dead worker's
    error from its SIGCHLD handler, wherever the main thread is: in the training step, where no
    one can catch it for the loader. Unwatched, the death is found where the loader waits for
    the batch (torch checks its workers every few seconds), and the loader replaces the
    configuration. The script's own configuration keeps torch's behaviour.

    Where it finds a dead worker, torch marks it unavailable and then checks the pool's done
    event, under the event's lock; a worker that was killed while it checked that event itself
    (it does for every index it gets) holds that lock for ever, and the check would never
    return. A tuned pool marks a dead worker without that check (its teardown is forced, and
    never sets the event either: burst/teardown.py)."""
    if not getattr(iterator, "_worker_pids_set", False):
        return
    try:
        from torch.utils.data import _utils

        _utils.signal_handling._remove_worker_pids(id(iterator))
        iterator._worker_pids_set = False
    except Exception:  # noqa: BLE001 - another torch: its watch stays, its errors are caught later
        return
    if type(iterator) is torch_dataloader._MultiProcessingDataLoaderIter:
        # The class, not a function on the instance: torch calls the method from __del__ too,
        # where a weak reference to the iterator is dead already (and a strong one is a cycle).
        iterator.__class__ = _TunedPoolIter


class _TunedPoolIter(torch_dataloader._MultiProcessingDataLoaderIter):
    """torch's iterator, less the check of the done event where a dead worker is marked, and
    able to run shallower in place (redepth)."""

    def _try_put_index(self) -> None:
        # torch sends one index per batch handed out, keeping num_workers x prefetch_factor in
        # flight; where redepth() lowered prefetch_factor, sends wait until the batches in flight
        # are below it (torch's own check would raise instead).
        if self._send_idx - self._rcvd_idx >= self._prefetch_factor * self._num_workers:
            return
        super()._try_put_index()

    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        if shutdown:  # torch's shutdown, which has set the event itself
            super()._mark_worker_as_unavailable(worker_id, shutdown)
            return
        # torch's marking, less its closing assertion on the done event.
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False


def redepth(iterator: Any, prefetch_factor: int | None) -> bool:
    """Run a running pool at another prefetch_factor, its workers and the batches they are making
    kept: deeper, the new slots are sent now; shallower (a tuned pool's iterator only,
    _TunedPoolIter), sends wait until the batches in flight are below it. False, and nothing
    changed, where torch's iterator is not one this applies to (another torch, no workers,
    in_order=False): the caller starts a new pool instead. torch reads prefetch_factor from its
    iterator at every send and at a persistent pool's reset, so the new depth holds from here on,
    in later epochs too."""
    kind = type(iterator)
    if kind not in (torch_dataloader._MultiProcessingDataLoaderIter, _TunedPoolIter):
        return False
    if not getattr(iterator, "_in_order", False) or prefetch_factor is None or prefetch_factor < 1:
        return False
    try:
        old, workers = int(iterator._prefetch_factor), int(iterator._num_workers)
        in_flight = iterator._send_idx - iterator._rcvd_idx
    except (AttributeError, TypeError):
        return False
    if prefetch_factor < old and kind is not _TunedPoolIter:
        return False
    iterator._prefetch_factor = prefetch_factor
    for _ in range(max(0, prefetch_factor * workers - in_flight)):
        sent = iterator._send_idx
        iterator._try_put_index()
        if iterator._send_idx == sent:  # the epoch's indices ran out
            break
    return True


def keep_past_epoch(loader: Any, iterator: Any) -> bool:
    """Make a running pool persistent in place: its workers outlive the epoch's end, and the
    loader's next iter() resets them as torch resets a persistent pool, where a new persistent
    pool would start its workers again (a fork or an interpreter each, each worker's first-item
    opens). torch reads the flag from its iterator where an epoch ends and its workers never
    read it. False, and nothing changed, where this does not apply: another torch, no workers, a
    pool shut down, an IterableDataset (whose non-persistent pool lets each worker exit at its
    end of data), or a loader that is not this iterator's."""
    kind = type(iterator)
    if kind not in (torch_dataloader._MultiProcessingDataLoaderIter, _TunedPoolIter):
        return False
    if (
        getattr(iterator, "_dataset_kind", None) != torch_dataloader._DatasetKind.Map
        or getattr(iterator, "_shutdown", True)
        or getattr(loader, "_iterator", None) is not None
        or getattr(loader, "_index_sampler", None) is not getattr(iterator, "_index_sampler", ())
    ):
        return False
    iterator._persistent_workers = True
    # torch's DataLoader refuses the attribute once built; its iter() reads it to reset the pool.
    object.__setattr__(loader, "persistent_workers", True)
    loader._iterator = iterator
    register = getattr(iterator, "_register_persistent_workers_atexit", None)
    if getattr(iterator, "_pin_memory", False) and register is not None:
        register()  # as torch registers a persistent pool with pinned memory: stopped at exit
    return True


MIN_WAIT_S = 0.05  # the shortest wait for a batch between two looks at a hung pool's timeout


def timed(iterator: Any, timeout_s: float) -> None:
    """A tuned configuration's pool that hangs (a worker alive but stuck) fails after `timeout_s`
    without a batch, and the loader replaces the configuration; with torch's default timeout=0
    it would wait forever. Not torch's own `timeout`: with one, torch looks at its workers only
    when it runs out, and a killed worker (no longer on the SIGCHLD watch, unwatched()) would
    be found `timeout_s` late instead of within torch's status-check interval. Where the script
    set a timeout, torch's applies."""
    # The class's method, the iterator held weakly: the iterator holds the wrapper, and a bound
    # method in it would make a cycle that keeps the pool (a persistent one's workers) alive after
    # the script drops its loader, until a garbage collection that may come only at exit.
    method = getattr(type(iterator), "_try_get_data", None)
    if (
        method is None
        or timeout_s <= 0
        or getattr(iterator, "_timeout", 0) > 0
        or getattr(iterator, "_autotune_timed", False)
    ):  # a persistent pool's, iterated again
        return
    empty_s = [0.0]  # the current run of status checks that found no batch
    owner = weakref.ref(iterator)

    def try_get_data(*args: Any, **kwargs: Any) -> Any:
        if not args and "timeout" not in kwargs:
            # torch's own wait per call is its status-check interval (5 s): no longer than the
            # time left, or a 1 s timeout would be found after 5 s.
            left = max(timeout_s - empty_s[0], MIN_WAIT_S)
            kwargs["timeout"] = min(left, torch_dataloader._utils.MP_STATUS_CHECK_INTERVAL)
        began = time.monotonic()
        success, data = method(owner(), *args, **kwargs)
        empty_s[0] = 0.0 if success else empty_s[0] + time.monotonic() - began
        if empty_s[0] >= timeout_s:
            raise RuntimeError(
                f"DataLoader timed out after {timeout_s:g} seconds (autotune's"
                " candidate_timeout_s: a tuned configuration's pool hung)"
            )
        return success, data

    iterator._try_get_data = try_get_data
    iterator._autotune_timed = True


_pools: weakref.WeakSet[Any] = weakref.WeakSet()  # pools to stop at exit, before torch's joins
_pools_owner: list[int] = []  # the process they belong to: a forked child inherits the set


def stopped_before_torch_exits(iterator: Any) -> None:
    """For a pool with persistent workers and pinned memory, torch registers an atexit join of
    each worker (a 5 s timeout, then terminate), so that they outlive its pin-memory thread. A
    pool still alive at exit was never told to stop, so each join waits out its timeout, one
    worker after another, after the script's last line (results/gpu). autotune
    made the pool persistent where the script may not have, so its pools stop first: this
    handler is registered after torch's, and atexit runs the last registered first."""
    if not (
        getattr(iterator, "_persistent_workers", False) and getattr(iterator, "_pin_memory", False)
    ):
        return
    if _pools_owner != [os.getpid()]:
        _pools.clear()
        _pools_owner[:] = [os.getpid()]
    _pools.add(iterator)
    atexit.unregister(stop_pools)
    atexit.register(stop_pools)


def stop_pools() -> None:
    """Every pool stopped_before_torch_exits() took, stopped the way its loader's end stops it."""
    if _pools_owner != [os.getpid()]:
        return
    for iterator in list(_pools):
        try:
            iterator._shutdown_workers()
        except Exception:  # noqa: BLE001 - exiting: torch's own joins remain the fallback
            log.debug("autotune: stopping a pool at exit raised", exc_info=True)
    _pools.clear()
