"""The state one `autotune.DataLoader` keeps across epochs: its policy, meter and ledger, the
inner torch loader a persistent configuration keeps alive, and what it leaves at exit."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from autotune.burst.backlog import ready_batches
from autotune.online.finish import Outbox, Outcome
from autotune.online.inner import InnerLoaders
from autotune.online.meter import Ledger, Meter, Step
from autotune.online.policy import HillClimb, Policy
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig

log = logging.getLogger("autotune")


@dataclass(frozen=True)
class TunerState:
    """What the online tuner has done so far, for code to inspect."""

    exploring: bool
    current: LoaderConfig  # the configuration running now (the chosen one once exploring ended)
    chosen: LoaderConfig | None  # None while exploring
    exploration_steps: int
    # The step (batches handed out, from 0) at which exploring ended, the switch to the chosen
    # configuration included: steps [0, k) explored. None while exploring.
    exploration_ended_at: int | None
    exploration_cost_s: float  # time lost against the best configuration measured
    stop_reason: str | None
    measured: dict[str, float]  # label -> mean batches/s over its windows


@dataclass
class Session:
    policy: Policy
    inner: InnerLoaders
    outbox: Outbox
    workload: dict[str, Any]
    batch_size: int
    device: torch.device
    meter: Meter = field(default_factory=Meter)
    # The backlog of an inner iterator (burst/backlog.py); tests on a fake clock read none.
    ready: Callable[[Any], int | None] = ready_batches
    ledger: Ledger = field(default_factory=Ledger)
    applied: Recipe | None = None  # a saved recipe in force instead of tuning
    _kept: tuple[LoaderConfig, Any] | None = None  # a persistent configuration's inner loader
    running: Any = None  # the inner iterator of the epoch in progress
    _settling = False  # the switch to the chosen configuration is still exploration's cost

    def inner_loader(self, config: LoaderConfig, generator: torch.Generator | None) -> Any:
        if self._kept is not None and self._kept[0] == config:
            return self._kept[1]  # persistent workers: iterated again, its workers kept
        self.release()
        loader = self.inner.build(config, generator)
        if config.persistent_workers:
            self._kept = (config, loader)
        return loader

    def retire(self, iterator: Any) -> None:
        """A switch: the running inner iterator's workers stop now (not when it is collected)."""
        shutdown = getattr(iterator, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        self._kept = None

    def close(self) -> None:
        """Every worker stops now: the epoch in progress ends (its iterator stops) and a
        persistent configuration's kept loader goes."""
        if self.running is not None:
            self.retire(self.running)
            self.running = None
        self.release()

    def release(self) -> None:
        """Stop a kept persistent loader's workers."""
        if self._kept is not None:
            self.retire(getattr(self._kept[1], "_iterator", None))

    def handed_out(self, step: Step) -> LoaderConfig | None:
        """Account for one batch handed out; the configuration to switch to, if any."""
        self.ledger.add(step, self.policy.exploring or self._settling)
        if self._settling:  # the chosen configuration's first batch: exploration is paid for
            self._settling = False
            self._conclude()
        was_exploring = self.policy.exploring
        nxt = self.policy.observe(step)
        if was_exploring and not self.policy.exploring:
            self._finished(switching=nxt is not None)
        return nxt

    def epoch_ended(self) -> None:
        self.meter.epoch_ended()
        was_exploring = self.policy.exploring
        self.policy.epoch_ended()
        if was_exploring and not self.policy.exploring:
            self._finished(switching=False)  # the next epoch starts on the chosen configuration

    def _finished(self, *, switching: bool) -> None:
        """Exploring ended; with a switch to the chosen configuration still to come, its start-up
        is the exploration's last cost and the recipe waits for it."""
        self._settling = switching
        if not switching:
            self._conclude()

    def _conclude(self) -> None:
        if not isinstance(self.policy, HillClimb):
            return
        self.outbox.outcome = Outcome.of(self.policy, self.ledger, self.workload, self.batch_size,
                                         self.device)
        log.info(self.outbox.outcome.line)

    @property
    def ended_at(self) -> int | None:
        """The step at which exploring ended (see TunerState): the ledger's exploration steps are
        the run's first ones."""
        return None if self.policy.exploring or self._settling else self.ledger.explore_steps

    @property
    def recipe(self) -> Recipe | None:
        return self.outbox.outcome.recipe() if self.outbox.outcome is not None else self.applied

    def state(self) -> TunerState:
        climb = self.policy if isinstance(self.policy, HillClimb) else None
        best = climb.best if climb is not None else None
        cost = self.ledger.cost_s(1 / best.mean if best is not None and best.mean else None)
        return TunerState(
            exploring=self.policy.exploring, current=self.policy.current,
            chosen=None if self.policy.exploring else self.policy.current,
            exploration_steps=self.ledger.explore_steps,
            exploration_ended_at=self.ended_at, exploration_cost_s=cost,
            stop_reason=None if climb is None or climb.stop_reason is None else str(climb.stop_reason),
            measured={} if climb is None else {m.config.label(): m.mean
                                               for m in climb.measured.values() if m.n})
