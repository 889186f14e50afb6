"""The part of a loader's session that keeps the ranks of a DDP job in lockstep (lockstep.py):
the leader announces its switches and reads the followers' waiting; a follower reports its waiting
and switches where the leader said. A mixin of Session."""

from __future__ import annotations

from typing import Any

from autotune.online.lockstep import Decision, Follower, Lockstep
from autotune.online.meter import Meter, Step
from autotune.online.policy import FixedPolicy, HillClimb, Policy
from autotune.space.config import LoaderConfig


class RankSteps:
    policy: Policy
    lockstep: Lockstep | None
    meter: Meter
    epochs_ended: int
    _pending: Decision | None
    config: Any

    def _follow(self, step: Step) -> LoaderConfig | None:
        """A following rank: it reports its waiting and switches where the leader said."""
        assert self.lockstep is not None and isinstance(self.policy, Follower)
        if not self.policy.exploring and not self.lockstep.queue:
            # Exploring is over: the leader announces only at an epoch's end, read when the next
            # starts (epoch_starting): a store round trip every step slows short steps.
            return None
        self.lockstep.poll()
        if step.step_s is not None and step.segment_step > self.config.prefetch_depth:
            self.lockstep.waited(self.config.label(), step.wait_s, step.step_s)
        return self._apply(self.lockstep.due(step.index + 1))

    def _apply(self, decision: Decision | None) -> LoaderConfig | None:
        if decision is None or not isinstance(self.policy, Follower):
            return None
        self.policy.current, self.policy.exploring = decision.config, decision.exploring
        return decision.config if decision.config != self.config else None

    def _read_peers(self) -> None:
        """The leader reads how much the followers wait: the plan feeds the most starved."""
        assert self.lockstep is not None
        if not isinstance(self.policy, HillClimb):
            return
        shares = self.lockstep.peer_waits()
        for m in self.policy.measured.values():
            m.peer_wait_share = shares.get(m.config.label(), m.peer_wait_share)

    def epoch_starting(self) -> None:
        """Every rank starts an epoch on the same configuration: the leader's, with what it
        announced at the last epoch's end."""
        if self.lockstep is None:
            return
        if self.lockstep.leads:
            self._pending = None  # the epoch starts on the policy's current, announced already
            return
        if self.epochs_ended:
            self.lockstep.wait_epoch(self.epochs_ended - 1)
        self.lockstep.poll()
        decision = self.lockstep.due(1 << 62)
        if decision is not None and isinstance(self.policy, Follower):
            self.policy.current, self.policy.exploring = decision.config, decision.exploring

    def _epoch_announced(self) -> None:
        """The leader: the next epoch's configuration (what a stop at the epoch's end chose, or
        a switch announced past it), then the epoch's end, for the followers to start on."""
        ls = self.lockstep
        self.epochs_ended += 1
        if ls is None or not ls.leads:
            return
        if self._pending is not None or not isinstance(self.policy, FixedPolicy):
            ls.announce(Decision(self.policy.current, self.meter.count, self.policy.exploring))
        ls.epoch_done(self.epochs_ended - 1)
