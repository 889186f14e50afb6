"""A switch that turns persistent_workers on alone keeps the running pool (inner.keep_past_epoch):
its workers outlive the epoch's end, the next epoch resets them as torch resets a persistent pool,
and no worker starts (or opens its dataset) again. The climb counts no start-up for it, and the
choice of persistence at exploring's end switches in place at once."""

import os
from dataclasses import replace

import pytest
from online_fakes import (  # noqa: F401
    Indices,
    Scripted,
    _nothing_written_at_exit,
    as_lists,
    step_at,
)
from torch.utils.data import DataLoader, IterableDataset

import autotune
from autotune.online.climb_types import ClimbSettings, StopReason
from autotune.online.inner import keep_past_epoch
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig


class Pids(Indices):
    """Item i is (i, the pid of the worker that made it)."""

    def __getitem__(self, i: int) -> tuple[int, int]:
        return i, os.getpid()


def _items(batches) -> list[int]:
    return [int(i) for batch in batches for i in batch[0]]


def _pids(batches) -> set[int]:
    return {int(p) for batch in batches for p in batch[1]}


def test_a_running_pool_made_persistent_serves_the_next_epoch_with_its_workers():
    loader = DataLoader(Pids(24), batch_size=2, num_workers=2)
    it = iter(loader)
    first = [next(it) for _ in range(3)]
    assert keep_past_epoch(loader, it)
    epoch1 = first + list(it)  # torch's end of epoch: the workers are not shut down
    assert not it._shutdown and all(w.is_alive() for w in it._workers)
    again = iter(loader)
    assert again is it  # torch's persistent path: the same iterator, reset
    epoch2 = list(again)
    assert _items(epoch1) == _items(epoch2) == list(range(24))
    assert _pids(epoch2) == _pids(epoch1) and len(_pids(epoch1)) == 2  # no worker started again
    it._shutdown_workers()


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(8))


def test_where_keeping_the_pool_does_not_apply_nothing_changes():
    single = DataLoader(Indices(8), batch_size=1)
    assert not keep_past_epoch(single, iter(single))  # no workers
    stream = DataLoader(Stream(), batch_size=1, num_workers=2)
    stream_it = iter(stream)
    assert not keep_past_epoch(stream, stream_it)  # each worker exits at its end of data
    assert not stream_it._persistent_workers and not stream.persistent_workers
    stream_it._shutdown_workers()
    loader = DataLoader(Indices(8), batch_size=1, num_workers=2)
    other = DataLoader(Indices(8), batch_size=1, num_workers=2)
    it = iter(loader)
    assert not keep_past_epoch(other, it)  # not the loader that made it
    it._shutdown_workers()
    assert not keep_past_epoch(loader, it)  # shut down already
    assert not it._persistent_workers and not loader.persistent_workers
    assert not keep_past_epoch(loader, object())


W2 = LoaderConfig(num_workers=2, prefetch_factor=2)


@pytest.mark.parametrize("deeper", [False, True])
def test_the_loader_keeps_its_pool_when_persistence_turns_on(deeper):
    persist = replace(W2, persistent_workers=True, prefetch_factor=4 if deeper else 2)
    loader = autotune.DataLoader(Indices(40), batch_size=1)
    policy = Scripted(loader, {3: W2, 8: persist}, stop_at=12)
    loader.tune_with(policy)
    assert sum(as_lists(loader), []) == list(range(40))
    by_step = dict(enumerate(policy.steps))
    pool = by_step[3][2]
    assert all(by_step[i][2] is pool for i in range(3, 40))  # one pool, no restart
    assert by_step[3][1].startup_s is not None and by_step[8][1].startup_s is None
    assert by_step[8][1].segment_step == 0  # a segment of its own, as any switch
    kept = loader._session._kept
    assert kept is not None and kept[0] == persist and kept[1]._iterator is pool
    assert pool._prefetch_factor == persist.prefetch_factor
    assert sum(as_lists(loader), []) == list(range(40))  # the next epoch: the same workers
    assert loader._session.running is pool and not pool._shutdown
    loader.close()
    assert pool._shutdown


def test_the_choice_of_persistence_switches_at_once_where_the_pool_is_kept():
    """A script's pool without persistent workers, whose start-up is a large share of its short
    epochs: exploring's end chooses persistent workers and asks for them now (the loader keeps the
    running pool), not at the next epoch's start, where a new pool would start again."""
    start = LoaderConfig(num_workers=4, prefetch_factor=2)
    climb = HillClimb(start, TUNED, ClimbSettings(epoch_steps=30, usable_cpus=2, cuda=False))
    assert climb._startup_ahead_s(replace(start, persistent_workers=True)) == 0.0
    climb.observe(step_at(0, 0, startup_s=0.5))
    for i in range(1, 20):
        climb.observe(step_at(i, i))
    chosen = climb._stop(StopReason.BOUND)
    assert chosen == replace(start, persistent_workers=True) == climb.current
