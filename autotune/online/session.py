"""The state one `autotune.DataLoader` keeps across epochs: its policy, meter and ledger, the
inner torch loader a persistent configuration keeps alive, what it leaves behind, and how it
stays out of the training's way when something fails:

- an error of autotune's own (policy, meter, measurement, backlog, results) trips the guard: it
  is logged once, the loader stays on the configuration running (it delivered batches) and tunes
  no further, and its report names the error;
- a configuration the tuner tried that raises (a worker killed, /dev/shm full, a timeout, an
  exception the script's own configuration does not raise) is marked failed; the batches it had
  pulled are replayed on the next configuration, so none is lost or doubled;
- the script's own configuration (torch's, `given`) raising is the script's error: raised as torch
  raises it.

Where several ranks of a DDP job explore as one (lockstep.py), the leader announces its switches
and reads the followers' waiting; a follower reports its waiting and switches where the leader
said. One class, Session: its loaders, its steps, its failures and its ranks.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from autotune.burst.backlog import ready_batches
from autotune.burst.teardown import release_loader
from autotune.online.finish import Outbox, Outcome
from autotune.online.guard import Guard, one_line
from autotune.online.inner import InnerLoaders
from autotune.online.lockstep import LAG, PUBLISH_EVERY, Decision, Follower, Lockstep
from autotune.online.meter import Ledger, Meter, Step
from autotune.online.policy import FixedPolicy, HillClimb, Policy
from autotune.online.pool_memory import PoolMemory
from autotune.online.registry import Choice, registry
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
    # The step (batches handed out, from 0) at which exploring last ended, the switch to the
    # chosen configuration included: steps [0, k) hold all the exploring (where it resumed, the
    # chosen configuration's steps before it too). None while exploring.
    exploration_ended_at: int | None
    exploration_cost_s: float  # time lost against the best configuration measured
    stop_reason: str | None
    measured: dict[str, float]  # label -> mean batches/s over its windows
    error: str | None = None  # autotune's own error, after which it stopped tuning
    failed: dict[str, str] = field(default_factory=dict)  # label -> the error it raised
    # label -> batches/s of each of its windows in the order measured, stalls and the windows a
    # re-measure left out included: what its verdicts were reached on
    windows: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Session:
    policy: Policy
    inner: InnerLoaders
    outbox: Outbox
    workload: dict[str, Any]
    batch_size: int
    device: torch.device
    given: LoaderConfig  # what torch runs with the script's arguments: the fallback of last resort
    identity: Any = None  # the workload's key in the process registry
    meter: Meter = field(default_factory=Meter)
    # The backlog of an inner iterator (burst/backlog.py); tests on a fake clock read none.
    ready: Callable[[Any], int | None] = ready_batches
    ledger: Ledger = field(default_factory=Ledger)
    applied: Recipe | None = None  # a saved recipe in force instead of tuning
    untuned_why: str | None = None  # set where the loader runs one configuration and reports it
    _kept: tuple[LoaderConfig, Any] | None = None  # a persistent configuration's inner loader
    running: Any = None  # the inner iterator of the epoch in progress
    running_config: LoaderConfig | None = None  # its configuration
    _epoch: Any = None  # a weak reference to the epoch in progress (OnlineEpoch)
    epoch_open = False  # an epoch started and has not reached its end
    epochs_ended = 0
    batch_seen = False  # the first batch was sized for the memory check (see_batch)
    lockstep: Lockstep | None = None  # several ranks explore as one (lockstep.py)
    _pending: Decision | None = None  # the leader's switch, announced for a later step
    _settling = False  # the switch to the chosen configuration is still exploration's cost
    guard: Guard = field(init=False)

    def __post_init__(self) -> None:
        # Weakly: a reference cycle would be freed by the cyclic collector, which may run inside a
        # forked worker and shut down from there the queues the parent's workers still use.
        self.guard = Guard(self.outbox.name, weakref.WeakMethod(self._tripped))
        self.outbox.interim = weakref.WeakMethod(self._interim)

    @property
    def config(self) -> LoaderConfig:
        """The configuration running now (before the first batch or between epochs: the one the
        next epoch starts on)."""
        return self.running_config or self.policy.current

    # -- inner loaders ---------------------------------------------------------------------

    def inner_loader(self, config: LoaderConfig, generator: torch.Generator | None) -> Any:
        if self._kept is not None and self._kept[0] == config:
            return self._kept[1]  # persistent workers: iterated again, its workers kept
        if self._kept is not None and self._kept_at_depth(config):
            return self._kept[1]
        self.release()
        loader = self.inner.build(config, generator)
        if config.persistent_workers:
            self._kept = (config, loader)
        return loader

    def _kept_at_depth(self, config: LoaderConfig) -> bool:
        """The kept persistent pool differs from `config` in prefetch_factor alone: it takes the
        new depth at its next iter(), whose reset sends num_workers x prefetch_factor indices from
        none in flight, and is kept under `config` (a new pool would start its workers again)."""
        assert self._kept is not None
        kept_config, loader = self._kept
        iterator = getattr(loader, "_iterator", None)
        if not kept_config.same_pool(config) or not hasattr(iterator, "_prefetch_factor"):
            return False
        assert iterator is not None
        iterator._prefetch_factor = config.prefetch_factor
        self._keep(config, loader)
        return True

    def kept_running(self, config: LoaderConfig, loader: Any) -> None:
        """The running pool took `config` in place (epoch.py, _keep_pool): it runs `config` now,
        and where it is persistent (it was, or was just made so) its loader is kept under it for
        the next epoch."""
        self.running_config = config
        if getattr(loader, "_iterator", None) is self.running:
            self._keep(config, loader)

    def _keep(self, config: LoaderConfig, loader: Any) -> None:
        """A kept persistent loader, now at `config`'s depth (as torch's attribute reads it)."""
        loader.prefetch_factor = config.prefetch_factor
        self._kept = (config, loader)

    def retire(self, iterator: Any, *, failed: bool = False) -> None:
        """A switch: the running inner iterator's workers stop now (not when it is collected).
        `failed`: the pool raised (a worker killed or hung): its workers are killed without
        torch's graceful shutdown, which can wait for ever on a lock a killed worker held
        (burst/teardown.py)."""
        try:
            if failed:
                release_loader(None, iterator, force=True)
            elif (shutdown := getattr(iterator, "_shutdown_workers", None)) is not None:
                shutdown()
        except Exception:  # noqa: BLE001 - a pool that died (the reason for a switch) is gone
            log.debug("autotune: shutting a pool down raised", exc_info=True)
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

    def open_epoch(self, epoch: Any) -> None:
        """A new epoch: one still open (a `break`, Lightning's sanity check, limit_*_batches)
        ends here, so the time outside the loop since its last batch is no step."""
        previous = self._epoch() if self._epoch is not None else None
        self._epoch = weakref.ref(epoch)
        if previous is not None:
            previous.done = True  # an old iterator kept by the script gets nothing more
        if self.epoch_open:
            kept = None if self._kept is None else getattr(self._kept[1], "_iterator", None)
            if self.running is not None and self.running is not kept:
                self.retire(self.running)  # a persistent pool is reset by its next iter()
            self.guard.call(self.epoch_ended)
        self.epoch_open = True

    # -- what the loop does, step by step (autotune's part: callers run it guarded) ----------

    def before_next(self) -> None:
        reg = registry()
        if reg.active != id(self):  # another loader ran since this one's last batch
            self.meter.epoch_ended()
            reg.active = id(self)
        self.meter.enter()

    def see_batch(self, batch: Any) -> None:
        """The first batch delivered: what each batch in flight needs of /dev/shm, for the worker
        range's memory check (pool_memory.py)."""
        self.batch_seen = True
        memory = getattr(getattr(self.policy, "range", None), "fits", None)
        if isinstance(memory, PoolMemory):
            memory.learn_batch(batch)

    def delivered(self, inner: Any, exhausted: bool) -> LoaderConfig | None:
        """One batch handed out by `inner`; the configuration to switch to, if any."""
        # The backlog is read only while exploring (after it, nothing is measured), and only while
        # the sampler has indices left: past that the workers idle for want of work, and a
        # draining backlog would read as a loader producing nothing (an epoch's tail read 0
        # batches/s, and a rate of 0 was divided by).
        backlog = self.ready(inner) if self.policy.exploring and not exhausted else None
        return self.handed_out(self.meter.handed_out(backlog))

    def handed_out(self, step: Step) -> LoaderConfig | None:
        """Account for one batch handed out; the configuration to switch to, if any."""
        self.ledger.add(step, self.policy.exploring or self._settling or self._pending is not None)
        if isinstance(self.policy, Follower):
            return self._follow(step)
        if self._pending is not None:  # the old configuration until the announced step
            if step.index + 1 < self._pending.at:
                return None
            config, self._pending = self._pending.config, None
            return config
        if self._settling:  # the chosen configuration's first batch: exploration is paid for
            self._settling = False
            self._conclude()
        was_exploring = self.policy.exploring
        nxt = self.policy.observe(step)
        if self.lockstep is not None and self.policy.exploring and step.index % PUBLISH_EVERY == 0:
            self._read_peers()
        if was_exploring and not self.policy.exploring:
            self._finished(switching=nxt is not None)
            if nxt is None and self.lockstep is not None:
                # Ended on the configuration running: the followers are told anyway, or each
                # would go on reading the store at every step until the epoch's end.
                self.lockstep.announce(Decision(self.policy.current, step.index + 1 + LAG, False))
        elif nxt is not None and self.policy.exploring:
            self.outbox.write()  # a checkpoint at each new candidate: a SIGKILL leaves the last
        if nxt is not None and self.lockstep is not None:
            self._pending = Decision(nxt, step.index + 1 + LAG, self.policy.exploring)
            self.lockstep.announce(self._pending)
            return None
        return nxt

    def epoch_ended(self) -> None:
        self.epoch_open = False
        # Read back between epochs, a loader's attributes are the next epoch's configuration: the
        # last one's may have been left for a switch due at its end (a drained stream starts no
        # workers), and the ranks would read different ones where only some started it.
        self.running_config = None
        self.meter.epoch_ended()
        was_exploring = self.policy.exploring
        self.policy.epoch_ended()
        self._epoch_announced()
        if self.lockstep is not None and not self.lockstep.leads:
            self._read_epoch_end(at_end=True)
        if was_exploring and not self.policy.exploring:
            self._finished(switching=False)  # the next epoch starts on the chosen configuration
        elif self.policy.exploring:
            if not was_exploring:  # the run outlived the horizon: exploring resumed (policy.py)
                self._settling = False
                self.outbox.outcome = None  # the best so far, until exploring ends again
            # A checkpoint: a script often drops its loader before exit (a local of its main()),
            # and what was measured since the last candidate's checkpoint would go with it.
            self.outbox.write()
        elif self.untuned_why is not None and self.outbox.outcome is None:
            self.outbox.publish(self._untuned())

    # -- failures: a configuration that raises gives way, autotune's own error stops tuning ----

    def fallback_after(self, exc: BaseException, config: LoaderConfig) -> LoaderConfig | None:
        """`config` raised while starting or fetching: the configuration to replay its batches on,
        or None where it is the script's own (the error is the script's: raise it)."""
        if config == self.given:
            return None
        error = one_line(exc)
        log.warning(
            "autotune.DataLoader %s: configuration %s failed (%s); its batches go on with another",
            self.outbox.name,
            config.label(),
            error,
        )
        log.debug("the failure of %s", config.label(), exc_info=exc)
        nxt = None
        if isinstance(self.policy, HillClimb) and not self.guard.tripped:
            nxt = self.guard.call(self.policy.failed, config, error)
        if nxt is None or nxt == config or self._failed(nxt):
            nxt = self.given
            if not self.guard.tripped:
                self.policy = self._fixed(
                    self.given,
                    f"configuration {config.label()} failed ({error}); back to the script's own",
                )
        self.running_config = None
        self.guard.call(self.outbox.write)
        return nxt

    def _failed(self, config: LoaderConfig) -> bool:
        m = self.policy.measurement_of(config) if isinstance(self.policy, HillClimb) else None
        return m is not None and m.failed is not None

    def _fixed(self, config: LoaderConfig, why: str) -> FixedPolicy:
        """Tuning ends on `config`; the report says why."""
        if self.outbox.outcome is None and not isinstance(self.policy, HillClimb):
            self.untuned_why = why
        return FixedPolicy(config)

    def _tripped(self, exc: BaseException) -> None:
        """autotune's own error: stay on what runs, tune no further, report the error."""
        running = self.config
        error = self.guard.error
        try:
            if isinstance(self.policy, HillClimb):
                outcome = Outcome.of(
                    self.policy,
                    self.ledger,
                    self.workload,
                    self.batch_size,
                    self.device,
                    running=running,
                    error=error,
                )
            else:
                outcome = self._untuned(error)
        except Exception:  # noqa: BLE001 - the report of last resort, from nothing it computed
            outcome = Outcome.untuned(
                running,
                "tuning stopped",
                Ledger(),
                self.workload,
                self.batch_size,
                self.device,
                error,
            )
        self.policy = FixedPolicy(running)
        self._settling = False
        self.outbox.publish(outcome)

    # -- ranks: a DDP job's ranks in lockstep (lockstep.py) ---------------------------------

    def _follow(self, step: Step) -> LoaderConfig | None:
        """A following rank: it reports its waiting and switches where the leader said."""
        assert self.lockstep is not None and isinstance(self.policy, Follower)
        if not self.policy.exploring and not self.lockstep.queue:
            # Exploring is over: the leader announces only at an epoch's end, read when the next
            # starts (epoch_starting): a store round trip every step slows short steps.
            return None
        self.lockstep.poll()
        if step.step_s is not None and step.segment_step > self.config.prefetch_depth:
            self.lockstep.waited(self.config.label(), step.wait_s, step.unready, step.step_s)
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
        peers = self.lockstep.peer_waits()
        for m in self.policy.measured.values():
            peer = peers.get(m.config.label())
            if peer is not None:
                m.peer_wait_share, m.peer_unready_share = peer.wait, peer.unready

    def epoch_starting(self) -> None:
        """Every rank starts an epoch on the same configuration: the leader's, with what it
        announced at the last epoch's end."""
        if self.lockstep is None:
            return
        if self.lockstep.leads:
            self._pending = None  # the epoch starts on the policy's current, announced already
            return
        self._read_epoch_end(at_end=False)

    def _read_epoch_end(self, *, at_end: bool) -> None:
        """A follower: what the leader announced up to its last epoch's end, due or not (a switch
        announced past the epoch's last batch acts at the next one). Read once: where this
        rank's end read it, the next epoch's start has nothing to add (the leader announces the
        next epoch's switches as it runs them, read step by step)."""
        ls = self.lockstep
        assert ls is not None
        epoch = self.epochs_ended - 1
        if epoch >= 0:
            if ls.read_through == epoch:
                return
            if ls.wait_epoch(epoch, at_end=at_end):
                ls.read_through = epoch
        ls.poll()
        decision = ls.due(1 << 62)
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

    # -- outcomes ---------------------------------------------------------------------------

    def _finished(self, *, switching: bool) -> None:
        """Exploring ended; with a switch to the chosen configuration still to come, its start-up
        is the exploration's last cost and the recipe waits for it."""
        self._settling = switching
        if not switching:
            self._conclude()

    def _conclude(self) -> None:
        if not isinstance(self.policy, HillClimb):
            return
        self.outbox.publish(
            Outcome.of(self.policy, self.ledger, self.workload, self.batch_size, self.device)
        )
        registry().decided(
            self.identity, Choice(self.policy.current, self.outbox.name), training=True
        )

    def _interim(self) -> Outcome | None:
        """The outcome of a run that ends now: the best so far while exploring."""
        if self.guard.tripped:
            return None
        # Anything measured: a run started from the memory may never measure its start.
        if isinstance(self.policy, HillClimb) and any(
            m.rates for m in self.policy.measured.values()
        ):
            return Outcome.of(self.policy, self.ledger, self.workload, self.batch_size, self.device)
        if self.untuned_why is not None and self.ledger.tuned_steps + self.ledger.explore_steps:
            return self._untuned()
        return None

    def _untuned(self, error: str | None = None) -> Outcome:
        return Outcome.untuned(
            self.config,
            self.untuned_why or "not tuned",
            self.ledger,
            self.workload,
            self.batch_size,
            self.device,
            error,
        )

    @property
    def ended_at(self) -> int | None:
        """The step at which exploring last ended (see TunerState)."""
        return None if self.policy.exploring or self._settling else self.ledger.explored_to

    @property
    def recipe(self) -> Recipe | None:
        outcome = self.outbox.outcome
        return outcome.recipe(self.outbox.ranks) if outcome is not None else self.applied

    def state(self) -> TunerState:
        climb = self.policy if isinstance(self.policy, HillClimb) else None
        best = climb.best if climb is not None else None
        cost = self.ledger.cost_s(1 / best.mean if best is not None and best.mean else None)
        return TunerState(
            exploring=self.policy.exploring,
            current=self.config,
            chosen=None if self.policy.exploring else self.policy.current,
            exploration_steps=self.ledger.explore_steps,
            exploration_ended_at=self.ended_at,
            exploration_cost_s=cost,
            stop_reason=None
            if climb is None or climb.stop_reason is None
            else str(climb.stop_reason),
            measured={}
            if climb is None
            else {m.config.label(): m.mean for m in climb.measured.values() if m.n},
            error=self.guard.error,
            failed={}
            if climb is None
            else {m.config.label(): m.failed for m in climb.measured.values() if m.failed},
            windows={}
            if climb is None
            else {m.config.label(): list(m.rates) for m in climb.measured.values() if m.rates},
        )
