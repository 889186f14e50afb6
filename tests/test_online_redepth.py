"""A switch that changes the prefetch depth alone keeps the running pool (inner.redepth): its
workers and the batches they are making stay, deeper at once or shallower as batches are taken,
and the loop gets every batch in order. The climb counts no pool start-up for it, and the pool's
own start-up stands for the new depth (the persistence rule reads it)."""

from dataclasses import replace

import pytest
import torch
from online_fakes import (  # noqa: F401
    Indices,
    Scripted,
    _nothing_written_at_exit,
    as_lists,
    step_at,
)
from torch.utils.data import DataLoader

import autotune
from autotune.online.climb_types import ClimbSettings, Request
from autotune.online.inner import _TunedPoolIter, redepth
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig


def _in_flight(iterator) -> int:
    return iterator._send_idx - iterator._rcvd_idx


def _pool(n=64, prefetch_factor=2, **kwargs):
    loader = DataLoader(
        Indices(n), batch_size=1, num_workers=2, prefetch_factor=prefetch_factor, **kwargs
    )
    return loader, iter(loader)


def test_deeper_sends_the_new_slots_at_once_and_keeps_the_order():
    _, it = _pool()
    first = [next(it) for _ in range(3)]
    assert _in_flight(it) == 4
    assert redepth(it, 4)
    assert _in_flight(it) == 8 and it._prefetch_factor == 4
    rest = list(it)
    assert torch.cat(first + rest).tolist() == list(range(64))


def test_shallower_waits_for_the_batches_in_flight_to_fall_below_it():
    _, it = _pool(prefetch_factor=4)
    it.__class__ = _TunedPoolIter  # as unwatched() makes a tuned configuration's pool
    first = [next(it) for _ in range(2)]
    assert redepth(it, 1)
    seen = []
    for _ in range(8):
        first.append(next(it))
        seen.append(_in_flight(it))
    assert seen == [7, 6, 5, 4, 3, 2, 2, 2]  # no send until below 2, then one per batch taken
    assert torch.cat(first + list(it)).tolist() == list(range(64))


def test_where_it_does_not_apply_nothing_changes():
    _, torchs_own = _pool(prefetch_factor=4)
    assert not redepth(torchs_own, 2)  # torch's own iterator would raise at its next send
    assert torchs_own._prefetch_factor == 4
    _, unordered = _pool(in_order=False)
    assert not redepth(unordered, 4)
    single = iter(DataLoader(Indices(8), batch_size=1))
    assert not redepth(single, 4)
    assert not redepth(object(), 4)


W0 = LoaderConfig()
W2 = LoaderConfig(num_workers=2, prefetch_factor=2)


@pytest.mark.parametrize("persistent", [False, True])
def test_the_loader_changes_the_depth_in_place_and_hands_out_every_batch(persistent):
    w2 = replace(W2, persistent_workers=persistent)
    deeper, shallower = replace(w2, prefetch_factor=4), replace(w2, prefetch_factor=1)
    loader = autotune.DataLoader(Indices(40), batch_size=1)
    policy = Scripted(loader, {3: w2, 8: deeper, 14: shallower}, stop_at=20)
    loader.tune_with(policy)
    assert sum(as_lists(loader), []) == list(range(40))
    by_step = {i: (config, step, running) for i, (config, step, running) in enumerate(policy.steps)}
    pool = by_step[3][2]
    assert by_step[2][2] is not pool  # the main process's loader, then the pool
    assert all(by_step[i][2] is pool for i in range(3, 20))  # one pool through both depths
    starts = {i: by_step[i][1].startup_s for i in (3, 8, 14)}
    assert starts[3] is not None and starts[8] is None and starts[14] is None
    assert [by_step[i][1].segment_step for i in (8, 14)] == [0, 0]  # a segment each
    assert by_step[10][0] == deeper and by_step[16][0] == shallower
    assert loader.prefetch_factor == 1 and pool._prefetch_factor == 1
    kept = loader._session._kept
    if persistent:  # the next epoch iterates the same workers again, at the depth now
        assert kept is not None and kept[0] == shallower and kept[1]._iterator is pool
        assert sum(as_lists(loader), []) == list(range(40))
        assert loader._session.running is pool
    else:
        assert kept is None
    loader.close()


def test_a_depth_taken_in_place_starts_no_pool_and_keeps_the_pools_start_up():
    start = LoaderConfig(num_workers=4, prefetch_factor=2, persistent_workers=True)
    climb = HillClimb(start, TUNED, ClimbSettings(epoch_steps=600, usable_cpus=2, cuda=False))
    climb.observe(step_at(0, 0, startup_s=0.3))
    deeper = replace(start, prefetch_factor=4)
    more = replace(start, num_workers=6)
    assert climb._startup_ahead_s(deeper) == 0.0  # the same pool, deeper
    assert climb._startup_ahead_s(more) == pytest.approx(0.3)  # a new pool
    climb._measure(Request(deeper))
    climb.observe(step_at(1, 0))  # no start-up: taken in place
    assert climb.measured[deeper].startup_s == pytest.approx(0.3)
    assert climb.persistence(deeper).startup_s == pytest.approx(0.3)


def test_an_error_taking_the_depth_in_place_stops_tuning_and_loses_no_batch(monkeypatch):
    def broken(iterator, prefetch_factor):
        raise RuntimeError("injected into redepth")

    monkeypatch.setattr("autotune.online.epoch.redepth", broken)
    loader = autotune.DataLoader(Indices(24), batch_size=1)
    policy = Scripted(loader, {3: W2, 8: replace(W2, prefetch_factor=4)}, stop_at=12)
    loader.tune_with(policy)
    assert sum(as_lists(loader), []) == list(range(24))  # in order, none lost or repeated
    # autotune's own error: tuning stops, and the loop goes on with the pool it had.
    assert len(policy.steps) == 8 and loader._session.running is policy.steps[3][2]
    assert loader._session.running._prefetch_factor == 2
    assert loader.tuner_state.error == "RuntimeError: injected into redepth"
    loader.close()
