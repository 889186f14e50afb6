"""The epoch's index stream, shared by the inner loaders that serve one epoch in turn.

torch's iterator pulls indices ahead of delivery (one batch per worker slot, up to
num_workers x prefetch_factor), so at a switch some batches were pulled but never handed out.
The stream remembers them and replays them, in order, to the next inner loader before it
continues the same sampler iterator: the sampler is iterated once per epoch, as torch does, so
its RNG draws, and the batch order, are exactly torch's.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator, Sized


class IndexStream:
    """One epoch's indices (batches of indices under auto-collation, single indices without)."""

    def __init__(self, source: Iterator[Any]):
        self._source = source
        self._issued: deque[Any] = deque()  # pulled by the current inner loader, not delivered yet
        self._replay: deque[Any] = deque()  # pulled by an earlier inner loader, never delivered
        self.segment = 0  # bumped at every switch: an older inner loader's pulls end there
        self.delivered = 0
        self.exhausted = False  # the sampler has no indices left this epoch

    def pull(self, segment: int) -> Any:
        """The next indices for the inner loader of `segment`; StopIteration at the epoch's end,
        or for a loader a switch has retired."""
        if segment != self.segment:
            raise StopIteration
        item = self._replay.popleft() if self._replay else self._next()
        self._issued.append(item)
        return item

    def mark_delivered(self) -> Any:
        """One batch was handed out: in order (in_order=True), it is the oldest one pulled."""
        self.delivered += 1
        return self._issued.popleft()

    def switch(self) -> int:
        """Retire the current inner loader: what it pulled and did not deliver comes first for the
        next one, ahead of what an earlier switch left to replay."""
        self._replay = self._issued + self._replay
        self._issued = deque()
        self.segment += 1
        return self.segment

    def drained(self) -> bool:
        """Nothing is left this epoch: nothing pulled undelivered and the sampler exhausted
        (asked by pulling its next indices early; they wait for the replay)."""
        if self._issued or self._replay:
            return False
        try:
            self._replay.append(self._next())
        except StopIteration:
            return True
        return False

    def _next(self) -> Any:
        try:
            return next(self._source)
        except StopIteration:
            self.exhausted = True
            raise

    @property
    def pending(self) -> int:
        """Indices pulled but not delivered, replays included."""
        return len(self._issued) + len(self._replay)


class Feed:
    """Where the inner loaders find the current epoch's stream. It refers to nothing else: an
    inner loader that referred back to the outer one would sit in a reference cycle, freed only
    by the cyclic collector, which may run in a forked worker and shut down, from there, the
    iterator's queues that the parent's workers still use."""

    def __init__(self) -> None:
        self.stream: IndexStream | None = None

    def current(self) -> IndexStream:
        assert self.stream is not None, "no epoch started"
        return self.stream


class StreamSampler:
    """The (batch_)sampler an inner loader gets: each iter() yields from the stream current at
    that moment while the segment of that moment lasts (a persistent inner loader is iterated
    again each epoch, and torch forbids replacing its batch_sampler). Its length is the user's
    sampler's, for torch's len()."""

    def __init__(self, feed: Feed, sized: Sized):
        self._feed = feed
        self._sized = sized

    def __iter__(self) -> Iterator[Any]:
        stream = self._feed.current()
        return _pulls(stream, stream.segment)

    def __len__(self) -> int:
        return len(self._sized)


def _pulls(stream: IndexStream, segment: int) -> Iterator[Any]:
    while True:
        try:
            yield stream.pull(segment)
        except StopIteration:
            return
