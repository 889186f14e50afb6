"""One epoch of `autotune.DataLoader`: the epoch's index stream, served by one inner torch
DataLoader per configuration, switched when the policy says so.

A switch happens inside the `__next__` that follows the policy's decision, so its start-up (the
new workers' start and their first batch) is in the loop's own wait and step time.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator

import torch

from autotune.online.index_stream import IndexStream
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
        self._switch_to: LoaderConfig | None = session.policy.current
        self._done = False

    def __iter__(self) -> "OnlineEpoch":
        return self

    def __len__(self) -> int:
        if self._length is None:
            raise TypeError("this loader's sampler has no length")
        return self._length

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        s = self._session
        if self._inner is not None and s.running is not self._inner:
            self._done = True  # the loader was closed: this epoch's workers are gone
            raise StopIteration
        s.meter.enter()
        if self._switch_to is not None and self._inner is not None and self.stream.drained():
            self._switch_to = None  # the epoch is over: no workers start for nothing
        if self._switch_to is not None:
            self._start(self._switch_to)
        assert self._inner is not None
        try:
            batch = next(self._inner)
        except StopIteration:
            self._done = True
            s.epoch_ended()
            raise
        self.stream.mark_delivered()
        # The backlog is read only while exploring: after it, nothing is measured.
        backlog = s.ready(self._inner) if s.policy.exploring else None
        self._switch_to = s.handed_out(s.meter.handed_out(backlog))
        return batch

    def _start(self, config: LoaderConfig) -> None:
        s = self._session
        if self._inner is not None:  # a switch: the old loader's undelivered batches go first
            s.retire(self._inner)
            self.stream.switch()
        s.meter.switching()
        with warnings.catch_warnings():
            # torch's advice on a worker count above the CPUs is for the user's own choice (the
            # outer loader gave it, where it applies); a count the tuner tries is measured.
            warnings.filterwarnings("ignore", message="This DataLoader will create")
            self._inner = iter(s.inner_loader(config, self._generator))
        s.running = self._inner
        self._switch_to = None
