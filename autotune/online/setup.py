"""Which policy an `autotune.DataLoader` gets, decided when it is made and when each epoch starts:
a recipe applied, the choice this process already made for the same workload, the climb, or, for
an evaluation loader, the training loader's choice."""

from __future__ import annotations

import logging
import os
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import torch
from torch.utils.data import IterableDataset

from autotune.errors import AutotuneError
from autotune.online.climb_types import ClimbSettings, normal, with_value
from autotune.online.finish import Outbox
from autotune.online.guard import one_line
from autotune.online.inner import InnerLoaders
from autotune.online.lockstep import Follower, Lockstep
from autotune.online.memory import Memory, restore
from autotune.online.options import TUNED
from autotune.online.policy import FixedPolicy, HillClimb, Policy
from autotune.online.pool_cpu import WorkersCpu, worker_pids
from autotune.online.pool_memory import PoolMemory, RamReading
from autotune.online.ranks import find
from autotune.online.registry import registry, sequential
from autotune.online.run_length import RunLength, from_stack
from autotune.online.run_length import given as given_length
from autotune.online.session import Session
from autotune.online.workload import describe, differences, identity, machine_differences
from autotune.recipe.model import Recipe, load_recipe
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus

log = logging.getLogger("autotune")


def new_session(loader: Any, recipe: str | Path | Recipe | None, base: str) -> Session:
    """The loader's session. A recipe that cannot be read is the user's error (one line); any
    other failure here leaves a loader that runs as torch's, untuned, and says why once."""
    try:
        return _new_session(loader, recipe, base)
    except AutotuneError:
        raise
    except Exception as exc:  # noqa: BLE001 - autotune's own: the training must not see it
        why = f"not tuned: its set-up failed ({one_line(exc)})"
        log.warning("autotune.DataLoader %s is %s", base, why)
        log.debug("autotune.DataLoader set-up", exc_info=exc)
        start = loader.given()
        writes = os.environ.get("RANK") in (None, "0")  # nothing of autotune's that could fail
        session = Session(
            FixedPolicy(start),
            InnerLoaders.of(loader),
            Outbox(
                loader.online.results_dir if writes else None, base, notices=loader.online.notices
            ),
            {"name": base},
            batch_size=loader.batch_size or 1,
            device=torch.device("cpu"),
            given=start,
        )
        session.untuned_why = why
        return session


def _new_session(loader: Any, recipe: str | Path | Recipe | None, base: str) -> Session:
    opts = loader.online
    reg = registry()
    key = identity(loader, base)
    name = reg.name(base, key)
    workload = describe(loader, name)
    start = given = loader.given()
    policy: Policy | None = None
    applied: Recipe | None = None
    writes = find().writes  # where torch.distributed is not up yet, as the launcher's variables say
    if recipe is not None:
        applied = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
        start = keep_fixed(loader, applied.config)
        other_workload = differences(applied.workload, workload)
        differs = other_workload or machine_differences(applied.environment, loader.cuda())
        if not differs:
            policy = FixedPolicy(start)
            log.info(
                "autotune.DataLoader applies its recipe (%s), measured for this workload on"
                " a comparable machine: no tuning",
                start.label(),
            )
        else:
            applied = None
            log.info(
                "autotune.DataLoader: the recipe was measured for another %s (%s); tuning"
                " from its configuration %s",
                "workload" if other_workload else "machine",
                "; ".join(differs),
                start.label(),
            )
    elif (choice := reg.choices.get(key)) is not None:
        policy = FixedPolicy(keep_fixed(loader, choice.config))
        writes = False  # its report is the first loader's
        log.info(
            "autotune.DataLoader %s: re-created for the same workload, runs the choice made"
            " in this process (%s) without exploring again",
            name,
            choice.config.label(),
        )
    if policy is None:
        policy = climb_policy(loader, start, usable_cpus().count)
    if not sequential(loader):
        reg.shuffling.add(loader)
    session = Session(
        policy,
        InnerLoaders.of(loader),
        Outbox(opts.results_dir if writes else None, name, notices=opts.notices),
        workload,
        batch_size=workload["batch_size"] or 1,
        device=torch.device("cuda" if loader.cuda() else "cpu"),
        given=given,
        identity=key,
    )
    session.applied = applied
    return session


def keep_fixed(loader: Any, config: LoaderConfig) -> LoaderConfig:
    """`config` for the tuned knobs, the given values for the fixed ones."""
    given = loader.given()
    out = given
    for name in TUNED:
        out = with_value(out, name, getattr(given if name in loader.fixed else config, name))
    return out


def climb_policy(
    loader: Any, start: LoaderConfig, cpus: int, ranks: int = 1, found: RunLength | None = None
) -> Policy:
    """The climb from `start` over `cpus`; the training's length from the options, else `found`
    (a framework's, run_length.py)."""
    opts = loader.online
    why = not_tunable(loader)
    if why is not None:
        if opts.enabled:
            log.info("autotune.DataLoader does not tune online: %s", why)
        return FixedPolicy(start)
    try:
        epoch_steps: int | None = len(loader)
    except TypeError:
        epoch_steps = None
    length = given_length(opts.total_steps, opts.epochs) or found
    total = None if length is None else length.steps(epoch_steps)
    settings = ClimbSettings(
        epoch_steps=epoch_steps,
        usable_cpus=cpus,
        cuda=loader.cuda(),
        total_steps=total,
        total_source=None if total is None or length is None else length.source,
        bound_share=opts.max_explore_share,
        min_horizon_steps=opts.max_explore_steps,
        max_workers=opts.max_workers,
        window_steps=opts.window_steps,
        window_s=opts.window_s,
        warmup_steps=opts.warmup_steps,
        min_windows=opts.min_windows,
        max_windows=opts.max_windows,
    )
    memory = PoolMemory(ranks=ranks)
    return HillClimb(
        start,
        tuple(k for k in TUNED if k not in loader.fixed),
        settings,
        fits=memory,
        ram=RamReading(),
        room=memory.room,
        cpu=WorkersCpu(_running_pids(weakref.ref(loader))),
    )


def _running_pids(loader: weakref.ref[Any]) -> Callable[[], list[int]]:
    """The running pool's worker pids, read through a weak reference: the policy that holds
    this is the loader's own, and a reference cycle would leave the loader (and its workers) to
    the cyclic collector, which may run inside a forked worker."""

    def pids() -> list[int]:
        session = getattr(loader(), "__dict__", {}).get("_session")
        return worker_pids(getattr(session, "running", None))

    return pids


def not_tunable(loader: Any) -> str | None:
    if not loader.online.enabled:
        return "tuning is off"
    if isinstance(loader.dataset, IterableDataset):
        return (
            "an IterableDataset's stream cannot be split between configurations; it runs"
            " the arguments given (or the recipe's) in every epoch"
        )
    if not loader.in_order:
        return (
            "in_order=False: batches arrive as they are ready, so a switch could not"
            " resume the epoch exactly"
        )
    return None


def epoch_starts(loader: Any, epoch: int) -> None:
    """An evaluation loader (no shuffle, iterated without gradients or named for evaluation) is
    not tuned: with few steps an epoch, exploring costs more than it can save. It runs the
    training loader's choice where one was made in this process (its workers are idle while
    evaluation runs), else the script's arguments. A training loader sizes its workers for its
    share of the CPUs, where several shuffling loaders may run at once."""
    s = loader._session
    if loader._own_policy or s.applied is not None or s.guard.tripped:
        return
    if epoch == 0 and isinstance(s.policy, HillClimb) and sequential(loader):
        loader._evaluation = not torch.is_grad_enabled() or loader._evaluation_named
    if loader._evaluation:
        training = registry().training
        config = (
            loader.given()
            if training is None
            else keep_fixed(
                loader,
                normal(
                    replace(training.config, persistent_workers=loader.given().persistent_workers)
                ),
            )
        )
        why = (
            "an evaluation loader (no shuffle, iterated without gradients or named for"
            " evaluation) is not tuned: it runs "
            + (
                f"the choice of {training.name}"
                if training
                else "as the script set it (no training loader had chosen yet)"
            )
        )
        if s.untuned_why != why or s.policy.current != config:
            s.policy, s.untuned_why = FixedPolicy(config), why
            s.outbox.outcome = None  # reported again at this epoch's end
        return
    if epoch == 0 and isinstance(s.policy, HillClimb) and not s.policy.steps:
        # Where the options give no length, a framework's fit loop up the stack may (it is the
        # caller now, not when the loader was made).
        join_ranks(loader, s, from_stack() if s.policy.settings.total_steps is None else None)


def join_ranks(loader: Any, s: Session, found: RunLength | None = None) -> None:
    """At the first epoch (torch.distributed is up by then, where the script uses it): the CPUs
    this loader may size its workers for are its share of its rank's share of the node, and so is
    the RAM its pool may grow into; one rank writes; with several ranks and their store, the ranks
    explore in lockstep. The climb is made again for them, and for the run's length `found`."""
    if not isinstance(s.policy, HillClimb):  # only a climb is made again (epoch_starts checks)
        return
    ranks = find()
    s.outbox.ranks = ranks.local_world
    if not ranks.writes:
        s.outbox.results_dir = None
    share = registry().cpu_share(loader, usable_cpus(ranks=ranks.local_world).count)
    if share != s.policy.settings.usable_cpus or ranks.local_world > 1 or found is not None:
        s.policy = climb_policy(loader, s.policy.start, share, ranks.local_world, found)
        if found is not None and isinstance(s.policy, HillClimb) and s.policy.settings.total_steps:
            log.info(
                "autotune.DataLoader %s: a run of %d steps (%s)",
                s.outbox.name,
                s.policy.settings.total_steps,
                found.source,
            )
    remember(loader, s, ranks.local_world, ranks.writes)
    if ranks.several and ranks.store is not None and isinstance(s.policy, HillClimb):
        prefix = f"autotune/online/{s.outbox.name}/{registry().generation(s.outbox.name)}"
        s.lockstep = Lockstep(ranks.store, ranks.rank, ranks.world, prefix)
        if not s.lockstep.leads:  # every rank read the memory: all start where the leader does
            s.policy = Follower(s.policy.current)
        log.info(
            "autotune.DataLoader %s: rank %d of %d (%s) explores in lockstep, %s",
            s.outbox.name,
            ranks.rank,
            ranks.world,
            ranks.source,
            "leading" if s.lockstep.leads else "following rank 0",
        )


def remember(loader: Any, s: Session, ranks: int, writes: bool) -> None:
    """The memory of this workload on this machine: a climb starts from it (memory.py), and the
    writing rank's outcome goes into it. Where it cannot be read, tuning goes on without it."""
    if not isinstance(s.policy, HillClimb) or not s.policy.exploring:
        return
    memory = Memory.open(loader.online.memory, s.workload, loader.cuda(), ranks, registry().run)
    if memory is None:
        return
    try:
        restored = memory.entry is not None and restore(s.policy, memory.entry)
    except Exception as exc:  # noqa: BLE001 - an entry this code cannot use: tune without it
        log.warning(
            "autotune.DataLoader %s: its memory of earlier runs could not be used (%s);"
            " tuning without it",
            s.outbox.name,
            one_line(exc),
        )
        restored = False
    if restored:
        assert memory.entry is not None
        log.info(
            "autotune.DataLoader %s: run %d of this workload here, starts at %s (remembered)",
            s.outbox.name,
            memory.entry.runs + 1,
            s.policy.current.label(),
        )
    if writes:
        s.outbox.memory = memory
        s.outbox.arm()
