"""One epoch of `autotune.DataLoader`: the epoch's index stream, served by one inner torch
DataLoader per configuration, switched when the policy says so.

A switch happens inside the `__next__` that follows the policy's decision, so its start-up (the
new workers' start and their first batch) is in the loop's own wait and step time.

The data path (the stream, the inner loaders) runs unguarded: its errors are torch's. autotune's
bookkeeping around it runs through the session's guard, and a configuration the tuner chose that
fails to start or to fetch hands its batches to another (session.fallback_after).
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator

import torch

from autotune.online.index_stream import IndexStream
from autotune.online.inner import (
    keep_past_epoch,
    redepth,
    stopped_before_torch_exits,
    timed,
    unwatched,
)
from autotune.online.session import Session
from autotune.space.config import LoaderConfig


class OnlineEpoch(Iterator[Any]):
    def __init__(self, session: Session, source: Iterator[Any], seed: int, length: int | None):
        self._session = session
        self.stream = IndexStream(source)
        session.inner.feed.stream = self.stream
        # Each inner loader draws its workers' base seed from this, in turn: deterministic, and a
        # new one per configuration segment (workers of two segments do not repeat a stream).
        self._generator = torch.Generator().manual_seed(seed)
        self._length = length
        self._inner: Iterator[Any] | None = None
        self._loader: Any = None  # the inner torch DataLoader that made _inner
        self._config: LoaderConfig | None = None  # the running inner loader's
        self._switch_to: LoaderConfig | None = session.policy.current
        self.done = False
        session.open_epoch(self)

    def __iter__(self) -> OnlineEpoch:
        return self

    def __len__(self) -> int:
        if self._length is None:
            raise TypeError("this loader's sampler has no length")
        return self._length

    def __next__(self) -> Any:
        if self.done:
            raise StopIteration
        s = self._session
        if self._inner is not None and s.running is not self._inner:
            self.done = True  # the loader was closed: this epoch's workers are gone
            raise StopIteration
        s.guard.call(s.before_next)
        if self._switch_to is not None and self._inner is not None and self.stream.drained():
            self._switch_to = None  # the epoch is over: no workers start for nothing
        if self._switch_to is not None:
            self._start(self._switch_to)
        batch = self._fetch()
        if not s.batch_seen:
            s.guard.call(s.see_batch, batch)
        self.stream.mark_delivered()
        self._switch_to = s.guard.call(s.delivered, self._inner, self.stream.exhausted)
        return batch

    def _keep_pool(self, config: LoaderConfig) -> bool:
        """`config` differs from the running one in prefetch_factor, or turns persistent_workers
        on, alone (LoaderConfig.same_pool): the running pool takes it in place, its workers and
        the batches they are making kept (inner.redepth, inner.keep_past_epoch), where a new pool
        would start its workers again (a fork or an interpreter each, each worker's first-item
        opens) and make the batches in flight once more. The segment that starts is measured as
        any switch's, without a start-up. False where it does not apply: the caller starts a new
        pool, which retires this one whatever was applied to it."""
        running, inner, loader = self._config, self._inner, self._loader
        if running is None or inner is None or not running.same_pool(config):
            return False
        persists = config.persistent_workers and not running.persistent_workers
        if persists and not keep_past_epoch(loader, inner):
            return False
        if config.prefetch_factor != running.prefetch_factor and not redepth(
            inner, config.prefetch_factor
        ):
            return False
        s = self._session
        s.meter.switching(new_pool=False)
        s.kept_running(config, loader)
        if persists:
            stopped_before_torch_exits(inner)
        self._config = config
        self._switch_to = None
        return True

    def _fetch(self) -> Any:
        """The next batch; where a configuration the tuner chose raises, the same batch from the
        one that replaces it."""
        s = self._session
        while True:
            assert self._inner is not None and self._config is not None
            try:
                return next(self._inner)
            except StopIteration:
                self.done = True
                s.guard.call(s.epoch_ended)
                raise
            except Exception as exc:
                fallback = s.fallback_after(exc, self._config)
                if fallback is None:
                    raise
                self._start(fallback, failed=True)

    def _start(self, config: LoaderConfig, *, failed: bool = False) -> None:
        """Run `config` from here on: the old loader's undelivered batches go first. A tuned
        configuration whose workers cannot start gives way as one that fails to fetch does.
        `failed`: the old loader raised (its pool is killed, not shut down). Where only the
        prefetch depth changes or persistence turns on, the running pool takes it in place
        (`_keep_pool`)."""
        s = self._session
        if not failed and self._inner is not None:
            if s.guard.call(self._keep_pool, config):
                return
            if s.guard.tripped:  # autotune's own error, just now: the loop stays on what runs
                self._switch_to = None
                return
        while True:
            if self._inner is not None:
                s.retire(self._inner, failed=failed)
                self.stream.switch()
            s.guard.call(s.meter.switching)
            self._switch_to = None
            try:
                with warnings.catch_warnings():
                    # torch's advice on a worker count above the CPUs is for the user's own choice
                    # (the outer loader gave it, where it applies); a count the tuner tries is
                    # measured.
                    warnings.filterwarnings("ignore", message="This DataLoader will create")
                    self._loader = s.inner_loader(config, self._generator)
                    self._inner = iter(self._loader)
            except Exception as exc:
                self._inner = self._loader = None
                self.stream.switch()  # what its start pulled goes to the next one
                fallback = s.fallback_after(exc, config)
                if fallback is None:
                    raise
                config = fallback
                continue
            s.guard.call(stopped_before_torch_exits, self._inner)
            if config != s.given:
                s.guard.call(unwatched, self._inner)
                s.guard.call(timed, self._inner, s.inner.candidate_timeout_s)
            self._config = config
            s.running, s.running_config = self._inner, config
            return
