"""Switching configuration mid-epoch keeps torch's batches: same indices, same order, each
sample once per epoch, and the same RNG draws (the global RNG's state after each epoch equals a
torch DataLoader's), across switches to and from worker processes."""

import pytest
import torch
from online_fakes import Indices, SwitchEvery, _nothing_written_at_exit, as_lists  # noqa: F401
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SubsetRandomSampler
from torch.utils.data.distributed import DistributedSampler

import autotune
from autotune.online.index_stream import IndexStream

N = 30
EPOCHS = 2


def _epochs(make, set_epoch=None) -> tuple[list, list]:
    """Each epoch's batches and the global RNG state after it, from a fresh global seed."""
    torch.manual_seed(1234)
    loader = make()
    seqs, states = [], []
    for epoch in range(EPOCHS):
        if set_epoch is not None:
            set_epoch(loader, epoch)
        seqs.append(as_lists(loader))
        states.append(torch.get_rng_state())
    return seqs, states


def _online(kwargs_of, k=3):
    def make():
        loader = autotune.DataLoader(**kwargs_of())
        loader.tune_with(SwitchEvery(k))
        return loader

    return make


CASES = {
    "shuffle with generator": lambda: dict(
        dataset=Indices(N), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(7)
    ),
    "shuffle, global RNG": lambda: dict(dataset=Indices(N), batch_size=4, shuffle=True),
    "custom sampler": lambda: dict(
        dataset=Indices(N), batch_size=3, sampler=SubsetRandomSampler(list(range(N)))
    ),
    "batch_sampler": lambda: dict(
        dataset=Indices(N),
        batch_sampler=BatchSampler(
            RandomSampler(range(N), generator=torch.Generator().manual_seed(3)), 4, False
        ),
    ),
    "drop_last": lambda: dict(dataset=Indices(N), batch_size=4, shuffle=True, drop_last=True),
    "no batching": lambda: dict(dataset=Indices(12), batch_size=None, shuffle=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_switching_keeps_torch_batches_and_rng(case):
    kwargs_of = CASES[case]
    expected, expected_rng = _epochs(lambda: DataLoader(**kwargs_of()))
    got, got_rng = _epochs(_online(kwargs_of))
    assert got == expected
    assert all(torch.equal(a, b) for a, b in zip(got_rng, expected_rng, strict=True))
    for epoch in got:  # every sample exactly once (drop_last: the dropped tail never)
        flat = [i for batch in epoch for i in (batch if isinstance(batch, list) else [batch])]
        assert len(flat) == len(set(flat))
        if case != "drop_last":
            assert sorted(flat) == list(range(len(kwargs_of()["dataset"])))


@pytest.mark.parametrize("rank", [0, 1])
def test_distributed_sampler_with_set_epoch(rank):
    def kwargs_of():
        sampler = DistributedSampler(Indices(N), num_replicas=2, rank=rank, shuffle=True, seed=5)
        return dict(dataset=Indices(N), batch_size=4, sampler=sampler)

    def set_epoch(loader, epoch):
        loader.sampler.set_epoch(epoch)

    expected, _ = _epochs(lambda: DataLoader(**kwargs_of()), set_epoch)
    got, _ = _epochs(_online(kwargs_of, k=2), set_epoch)
    assert got == expected
    assert got[0] != got[1]  # set_epoch reached the sampler: a new order each epoch
    assert sorted(i for b in got[0] for i in b) == sorted(set(i for b in got[0] for i in b))


def test_persistent_workers_given_draw_one_base_seed_like_torch():
    def kwargs_of():
        return dict(
            dataset=Indices(N),
            batch_size=4,
            shuffle=True,
            num_workers=1,
            persistent_workers=True,
            generator=torch.Generator().manual_seed(11),
        )

    expected, _ = _epochs(lambda: DataLoader(**kwargs_of()))
    got, _ = _epochs(_online(kwargs_of, k=4))
    assert got == expected


def test_switches_happened():
    loader = _online(CASES["shuffle with generator"], k=2)()
    list(loader)
    assert loader._session.policy.switches >= 3


def test_stream_replays_what_a_retired_loader_pulled_first():
    stream = IndexStream(iter(range(10)))
    pulled = [stream.pull(0) for _ in range(4)]  # a loader read ahead four
    stream.mark_delivered()  # and handed out one
    segment = stream.switch()
    with pytest.raises(StopIteration):
        stream.pull(0)  # the retired loader gets nothing more
    assert [stream.pull(segment) for _ in range(5)] == [1, 2, 3, 4, 5]
    assert pulled == [0, 1, 2, 3]
    segment = stream.switch()  # switched again before any delivery: the same order holds
    assert [stream.pull(segment) for _ in range(3)] == [1, 2, 3]


class WorkerSeed(Indices):
    """Item i is (i, the seed of the process that loaded it)."""

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        return i, -1 if info is None else info.seed


def test_worker_seeds_are_deterministic_and_new_per_segment():
    def run():
        loader = autotune.DataLoader(
            WorkerSeed(24), batch_size=2, shuffle=True, generator=torch.Generator().manual_seed(9)
        )
        loader.tune_with(SwitchEvery(4))
        return [int(seed) for _ in range(2) for _, seeds in loader for seed in seeds]

    first = run()
    assert first == run()
    worker_seeds = {s for s in first if s != -1}
    assert len(worker_seeds) > 4  # several segments with workers, each with seeds of its own


def test_freed_by_reference_counts_alone():
    """No reference cycle: a cycle is freed by the cyclic collector, which may run inside a
    forked worker and shut down from there the queues the parent's workers still use."""
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        loader = autotune.DataLoader(
            Indices(20), batch_size=2, num_workers=1, persistent_workers=True
        )
        loader.tune_with(SwitchEvery(3))
        it = iter(loader)
        for _ in range(5):
            next(it)
        session = weakref.ref(loader._session)
        outer = weakref.ref(loader)
        del loader
        assert outer() is None
        del it
        assert session() is None
    finally:
        gc.enable()


def test_no_configuration_starts_when_the_epoch_is_over():
    loader = autotune.DataLoader(Indices(8), batch_size=2)
    loader.tune_with(SwitchEvery(2))  # a switch decided at the epoch's last batch too
    built = []
    build = loader._session.inner.build
    loader._session.inner.build = lambda config, gen: built.append(config) or build(config, gen)
    assert sorted(i for b in as_lists(loader) for i in b) == list(range(8))
    assert len(built) == 2  # the start and the switch after batch 2; none after batch 4


def test_drained_keeps_what_it_looked_ahead():
    stream = IndexStream(iter(range(3)))
    assert not stream.drained()
    assert [stream.pull(0) for _ in range(3)] == [0, 1, 2]
    for _ in range(3):
        stream.mark_delivered()
    assert stream.drained()
