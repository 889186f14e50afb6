"""The lockstep protocol on an in-memory store: the leader's switches reach a follower for the same
step, a follower's waiting reaches the leader's plan, an epoch starts on the leader's choice, and
nothing waits for long on a rank that stopped. The real thing, two DDP ranks under three
launchers, is tests/test_online_ddp.py."""

from __future__ import annotations

import pytest

import autotune
from autotune.decision.verdict import takes_tie
from autotune.online.climb_types import ClimbSettings
from autotune.online.lockstep import LAG, PUBLISH_EVERY, Decision, Follower, Lockstep
from autotune.online.meter import Step
from autotune.online.policy import HillClimb
from autotune.online.ranks import find
from autotune.space.config import LoaderConfig

W0, W2 = LoaderConfig(), LoaderConfig(num_workers=2, prefetch_factor=2)


class Store:
    """torch's Store calls that lockstep makes, over a dict; wait() never blocks (it raises as a
    timed-out TCPStore does). It counts the checks: each is a round trip to rank 0's store."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.checks = 0

    def set(self, key, value):
        self.data[key] = value

    def get(self, key):
        return self.data[key]

    def check(self, keys):
        self.checks += 1
        return all(k in self.data for k in keys)

    def wait(self, keys, timeout):
        if not self.check(keys):
            raise RuntimeError("Socket Timeout")


def _pair():
    store = Store()
    return Lockstep(store, 0, 2, "p"), Lockstep(store, 1, 2, "p")


def test_a_switch_reaches_the_follower_for_the_same_step():
    leader, follower = _pair()
    decided_at = 10
    leader.announce(Decision(W2, decided_at + 1 + LAG, exploring=True))
    follower.poll()
    assert follower.due(decided_at + 1) is None  # not yet: the old configuration runs on
    assert follower.due(decided_at + LAG) is None
    assert follower.due(decided_at + 1 + LAG) == Decision(W2, decided_at + 1 + LAG, True)
    assert follower.due(decided_at + 2 + LAG) is None  # applied once


def test_the_last_of_several_due_decisions_wins():
    leader, follower = _pair()
    leader.announce(Decision(W2, 5, True))
    leader.announce(Decision(W0, 7, False))
    follower.poll()
    assert follower.due(100).config == W0 and follower.queue == []


def test_a_followers_waiting_reaches_the_leader():
    """All of it and its part on batches not yet made, each the most of any follower."""
    store = Store()
    leader, one, two = (Lockstep(store, rank, 3, "p") for rank in range(3))
    for _ in range(PUBLISH_EVERY):
        one.waited(W2.label(), wait_s=0.3, unready_s=0.02, step_s=1.0)
        two.waited(W2.label(), wait_s=0.2, unready_s=0.1, step_s=1.0)
    peer = leader.peer_waits()[W2.label()]
    assert (peer.wait, peer.unready) == (pytest.approx(0.3), pytest.approx(0.1))


def test_a_followers_wait_for_unready_batches_makes_the_leaders_pool_short():
    """The leader's loop waited only for hand-overs of ready batches; a follower's waited for
    batches not yet made. In DDP every rank steps at the slowest's pace, so the pool is short on
    the job: its rate is its workers', which the prediction reads (predict.py), and a tie does
    not go to it against a pool short on no rank (decision/verdict.py's takes_tie)."""
    store = Store()
    leader = _session(HillClimb(W2, ("num_workers",), ClimbSettings(1000, 2, cuda=False)), None)
    leader.lockstep = Lockstep(store, 0, 2, "p")
    follower = _session(Follower(W2), Lockstep(store, 1, 2, "p"))
    for i in range(PUBLISH_EVERY * 4):
        follower.handed_out(Step(i, 0.01, 0.003, i, None, unready_s=0.002))
    m = leader.policy.measured[W2]
    leader._read_peers()
    assert m.peer_wait_share == pytest.approx(0.3) and m.peer_unready_share == pytest.approx(0.2)
    assert m.unready_share is None and m.short_share == pytest.approx(0.2) and m.short
    assert not takes_tie(m.short_share, 0.0)  # what HillClimb._adopt reads, cheaper or not


def test_nothing_waits_on_a_leader_that_stopped():
    _, follower = _pair()
    follower.poll()  # nothing announced: returns at once
    assert follower.queue == []
    follower.wait_epoch(0, at_end=True)  # the store times out: the follower goes on as configured
    assert follower.missed
    checks = follower.store.checks
    follower.wait_epoch(1, at_end=True)  # a leader gone: no more waits at an epoch's end
    assert follower.store.checks == checks
    follower.wait_epoch(1, at_end=False)  # where one is needed, at the next epoch's start
    assert follower.store.checks == checks + 1


class EndsWhereItRuns:
    """A leader's policy that explores for `steps` batches and keeps the configuration running."""

    def __init__(self, steps: int):
        self.steps, self.exploring, self.current = steps, True, W0

    def observe(self, step: Step) -> None:
        self.exploring = step.index + 1 < self.steps

    def epoch_ended(self) -> None:
        return None


class DecidesAtTheEpochsEnd(EndsWhereItRuns):
    """A leader's policy that chooses at its epoch's end (as over whole-epoch windows), adding
    persistent_workers, which acts at the next epoch only."""

    def __init__(self, chosen: LoaderConfig):
        super().__init__(1 << 30)
        self.chosen = chosen

    def epoch_ended(self) -> None:
        self.current, self.exploring = self.chosen, False


def _session(policy, lockstep: Lockstep):
    s = autotune.DataLoader(list(range(64)), batch_size=2)._session
    s.policy, s.lockstep = policy, lockstep
    return s


def test_a_leader_that_ends_exploring_without_a_switch_stops_the_followers_polling():
    store = Store()
    explored = 5
    leader = _session(EndsWhereItRuns(explored), Lockstep(store, 0, 2, "p"))
    follower = _session(Follower(W0), Lockstep(store, 1, 2, "p"))
    told_at = explored + LAG  # the first batch index at which the decision applies
    checks = []
    for i in range(told_at + 20):
        assert leader.handed_out(Step(i, 0.01, 0.0, i, None)) is None
        before = store.checks
        assert follower.handed_out(Step(i, 0.01, 0.002, i, None)) is None  # no switch
        checks.append(store.checks - before)
    assert all(checks[:told_at])  # while the leader explores, every step reads the store
    assert not follower.policy.exploring and follower.policy.current == W0
    assert sum(checks[told_at:]) == 0  # after it, none: a round trip a step is gone


def test_ranks_as_the_launchers_set_them():
    class NoDist:
        @staticmethod
        def is_available():
            return True

        @staticmethod
        def is_initialized():
            return False

    torchrun = find({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"}, NoDist)
    assert (torchrun.rank, torchrun.world, torchrun.local_world) == (1, 2, 2)
    lightning = find({"LOCAL_RANK": "1", "WORLD_SIZE": "2", "NODE_RANK": "0"}, NoDist)
    assert (lightning.rank, lightning.local_world, lightning.writes) == (1, 2, False)
    single = find({}, NoDist)
    assert (single.rank, single.world, single.local_world, single.writes) == (0, 1, 1, True)

    class Spawned(NoDist):  # mp.spawn: no variable, torch.distributed up
        @staticmethod
        def is_initialized():
            return True

        @staticmethod
        def get_world_size():
            return 2

        @staticmethod
        def get_rank():
            return 1

    spawned = find({}, Spawned)
    assert (spawned.rank, spawned.world, spawned.local_world) == (1, 2, 2)


def _one_epoch(leader, follower, batches: int) -> None:
    for i in range(batches):
        leader.handed_out(Step(i, 0.01, 0.0, i, None))
        follower.handed_out(Step(i, 0.01, 0.002, i, None))


def test_a_decision_at_the_last_epochs_end_reaches_the_followers_loader():
    """No epoch follows, so no epoch's start: the follower reads it at its own end. Its loader's
    attributes read the configuration the next epoch would run, as the leader's do."""
    store = Store()
    chosen = LoaderConfig(num_workers=2, prefetch_factor=2, persistent_workers=True)
    leader = _session(DecidesAtTheEpochsEnd(chosen), Lockstep(store, 0, 2, "p"))
    follower = _session(Follower(W0), Lockstep(store, 1, 2, "p"))
    leader.running_config = follower.running_config = W2  # what the epoch ran
    _one_epoch(leader, follower, 6)
    leader.epoch_ended()
    follower.epoch_ended()  # the leader's end is in: no wait
    assert leader.config == follower.config == chosen
    assert not follower.policy.exploring and not follower.lockstep.missed
    checks = store.checks
    follower.epoch_starting()  # read at its end already: the store is not asked again
    assert store.checks == checks and follower.config == chosen


def test_a_switch_announced_past_the_epochs_last_batch_is_read_at_its_end():
    """The leader's switch is due after the epoch's last batch (a drained stream starts no
    workers for it): both ranks' loaders read it as the next epoch's configuration."""
    store = Store()
    leader = _session(EndsWhereItRuns(1 << 30), Lockstep(store, 0, 2, "p"))
    follower = _session(Follower(W0), Lockstep(store, 1, 2, "p"))
    leader.running_config = follower.running_config = W0
    batches = 6
    leader.lockstep.announce(Decision(W2, batches + LAG, exploring=True))
    leader._pending = Decision(W2, batches + LAG, exploring=True)
    leader.policy.current = W2
    _one_epoch(leader, follower, batches)
    leader.epoch_ended()
    follower.epoch_ended()
    assert leader.config == follower.config == W2


def test_a_follower_whose_end_came_first_reads_the_leaders_at_the_next_start():
    store = Store()
    chosen = LoaderConfig(num_workers=2, prefetch_factor=2, persistent_workers=True)
    leader = _session(DecidesAtTheEpochsEnd(chosen), Lockstep(store, 0, 2, "p"))
    follower = _session(Follower(W0), Lockstep(store, 1, 2, "p"))
    _one_epoch(leader, follower, 6)
    follower.epoch_ended()  # the leader's end is not in yet: this fake store times out at once
    assert follower.lockstep.missed and follower.config == W0
    leader.epoch_ended()
    follower.epoch_starting()
    assert follower.config == chosen


class ResumesAtItsEpochsEnd(EndsWhereItRuns):
    """A leader's policy that stopped exploring and resumes it at its epoch's end with a
    candidate (a run that outlived its horizon: policy.py, HillClimb._resume)."""

    def __init__(self):
        super().__init__(2)

    def epoch_ended(self) -> None:
        self.current, self.exploring = W2, True


def test_a_leader_that_resumes_exploring_takes_the_followers_along():
    store = Store()
    leader = _session(ResumesAtItsEpochsEnd(), Lockstep(store, 0, 2, "p"))
    follower = _session(Follower(W0), Lockstep(store, 1, 2, "p"))
    _one_epoch(leader, follower, 6)
    assert not leader.policy.exploring and not follower.policy.exploring
    leader.epoch_ended()
    follower.epoch_ended()
    assert leader.config == follower.config == W2 and follower.policy.exploring
    before = store.checks
    follower.handed_out(Step(6, 0.01, 0.002, 0, None))
    assert store.checks > before  # it reads the leader's switches at every step again
