"""Every rank, one decision: the ranks of a DDP job explore in lockstep. Rank 0 leads: its policy
decides, and each switch it decides is announced for a step a little ahead (LAG), so that every
rank switches at the same step. The other ranks follow the announcements and report how much of
their time they wait on their loader, so that the leader reads the most starved rank's need.

Why the leader's own rates are the slowest rank's: in DDP the gradients' all-reduce makes every
rank wait for the slowest at each step, so every rank's step time is the slowest rank's. What
differs is where each waits: a starved rank inside `__next__`, the others in the all-reduce.

Through the process group's store, never a collective (the training's own collectives could
interleave with it), and never blocking for long: every read is a check first, and the one wait
(a follower at an epoch's end, for the leader's decision at the same end) is bounded. It is made
at the end, not at the next epoch's start, so that a decision at the last epoch's end reaches
every rank's loader too (no next epoch may come). A rank that stops iterating (an uneven last
batch, a crash) leaves the others on their configuration; once a wait has timed out, a follower
waits only where it must, at an epoch's start (so a leader gone costs one wait per epoch).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from autotune.online.policy import FixedPolicy
from autotune.space.config import LoaderConfig

# A decision made at the leader's batch i switches the ranks at batch i + 1 + LAG. In DDP a rank
# hands out batch i+1 only after step i's all-reduce, which waits for the leader's step i, which
# comes after its announcement: with LAG >= 1 every rank has seen it in time.
LAG = 2
PUBLISH_EVERY = 8  # steps between a follower's reports of its waiting
EPOCH_WAIT_S = 10.0  # the most a follower waits at an epoch's end for the leader's decision


@dataclass(frozen=True)
class PeerWait:
    """A follower's wait on its loader over one configuration's steady steps, as shares of their
    time: all of it, and the part spent on batches not yet made (the hand-overs of ready ones
    left out)."""

    wait: float
    unready: float


@dataclass
class _Waited:
    """A follower's sums over one configuration's steady steps, in seconds."""

    wait_s: float = 0.0
    unready_s: float = 0.0
    step_s: float = 0.0

    def shares(self) -> PeerWait:
        return PeerWait(self.wait_s / self.step_s, self.unready_s / self.step_s)


@dataclass(frozen=True)
class Decision:
    config: LoaderConfig
    at: int  # the batch (counted over the loader's life) the ranks switch at
    exploring: bool


@dataclass
class Follower(FixedPolicy):
    """A following rank's policy: the configuration the leader announced (set from outside)."""

    exploring: bool = True


def _encode(d: Decision) -> bytes:
    return json.dumps({"config": asdict(d.config), "at": d.at, "exploring": d.exploring}).encode()


def _decode(raw: bytes) -> Decision:
    data = json.loads(raw)
    return Decision(LoaderConfig(**data["config"]), data["at"], data["exploring"])


@dataclass
class Lockstep:
    store: Any
    rank: int
    world: int
    prefix: str  # the loader's name and generation: the same on every rank
    announced: int = 0  # decisions announced (leader) or read (follower)
    missed: bool = False  # a follower's wait for an epoch's end timed out once
    read_through: int = -1  # the last epoch whose end, as the leader announced it, a follower read
    queue: list[Decision] = field(default_factory=list)  # read, not yet applied (follower)
    waits: dict[str, _Waited] = field(default_factory=dict)  # label -> its steps' sums
    _steps: int = 0

    @property
    def leads(self) -> bool:
        return self.rank == 0

    def _key(self, *parts: object) -> str:
        return "/".join((self.prefix, *map(str, parts)))

    # -- the leader ------------------------------------------------------------------------

    def announce(self, decision: Decision) -> None:
        self.store.set(self._key("decision", self.announced), _encode(decision))
        self.announced += 1

    def epoch_done(self, epoch: int) -> None:
        """Every decision of this epoch is announced: a follower may start the next one."""
        self.store.set(self._key("epoch", epoch), str(self.announced).encode())

    def peer_waits(self) -> dict[str, PeerWait]:
        """The most any follower waits on its loader, and for batches not yet made, as shares of
        its steps, per configuration (each the most of any follower's)."""
        out: dict[str, PeerWait] = {}
        for rank in range(1, self.world):
            key = self._key("waits", rank)
            if not self.store.check([key]):
                continue
            for label, shares in json.loads(self.store.get(key)).items():
                peer, seen = PeerWait(**shares), out.get(label, PeerWait(0.0, 0.0))
                out[label] = PeerWait(max(peer.wait, seen.wait), max(peer.unready, seen.unready))
        return out

    # -- a follower ------------------------------------------------------------------------

    def poll(self) -> None:
        """Read the decisions announced since the last poll (never waits)."""
        while self.store.check([self._key("decision", self.announced)]):
            self.queue.append(_decode(self.store.get(self._key("decision", self.announced))))
            self.announced += 1

    def due(self, next_index: int) -> Decision | None:
        """The last decision that applies at batch `next_index` or before, taken off the queue."""
        due = [d for d in self.queue if d.at <= next_index]
        self.queue = [d for d in self.queue if d.at > next_index]
        return due[-1] if due else None

    def wait_epoch(self, epoch: int, *, at_end: bool) -> bool:
        """Wait (bounded) for the leader's end of `epoch`: at this rank's end of it, or at the
        start of the next where that wait timed out. True where the leader's end is in."""
        if at_end and self.missed:
            return False
        try:
            self.store.wait([self._key("epoch", epoch)], timedelta(seconds=EPOCH_WAIT_S))
        except Exception:  # noqa: BLE001 - a leader that stopped: go on as configured
            self.missed = True
            return False
        return True

    def waited(self, label: str, wait_s: float, unready_s: float, step_s: float) -> None:
        """One steady step's wait, and of it the wait for a batch not yet made (meter.py's
        Step.unready), reported to the leader every PUBLISH_EVERY steps."""
        w = self.waits.setdefault(label, _Waited())
        w.wait_s += wait_s
        w.unready_s += unready_s
        w.step_s += step_s
        self._steps += 1
        if self._steps % PUBLISH_EVERY == 0:
            shares = {k: asdict(v.shares()) for k, v in self.waits.items() if v.step_s > 0}
            self.store.set(self._key("waits", self.rank), json.dumps(shares).encode())
