"""The lockstep protocol on an in-memory store: the leader's switches reach a follower for the same
step, a follower's waiting reaches the leader's plan, an epoch starts on the leader's choice, and
nothing waits for long on a rank that stopped. The real thing, two DDP ranks under three
launchers, is tests/test_online_ddp.py."""

from __future__ import annotations

import pytest

import autotune
from autotune.online.lockstep import LAG, PUBLISH_EVERY, Decision, Follower, Lockstep
from autotune.online.meter import Step
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
    leader, follower = _pair()
    for _ in range(PUBLISH_EVERY):
        follower.waited(W2.label(), wait_s=0.3, step_s=1.0)
    assert leader.peer_waits() == {W2.label(): pytest.approx(0.3)}


def test_nothing_waits_on_a_leader_that_stopped():
    _, follower = _pair()
    follower.poll()  # nothing announced: returns at once
    assert follower.queue == []
    follower.wait_epoch(0)  # the store times out: the follower goes on as configured


class EndsWhereItRuns:
    """A leader's policy that explores for `steps` batches and keeps the configuration running."""

    def __init__(self, steps: int):
        self.steps, self.exploring, self.current = steps, True, W0

    def observe(self, step: Step) -> None:
        self.exploring = step.index + 1 < self.steps

    def epoch_ended(self) -> None:
        return None


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
