"""Whether epoch restarts matter for this workload, and so whether persistent_workers does.

Drawn from the tuned burst's own restart cost (burst/epoch.py) and, where trials differ in
persistent_workers alone, from their measured rates over whole epochs; where restarts matter, the
line that follows names the interaction that decided the worker count: each count compared at
persistent_workers=True (decision/epoch_time.py), never a rate that paid a restart every epoch
against one that did not. Where the chosen burst crossed an epoch's end, a last line compares its
prefetch depth with the others measured at its other settings: every epoch refills the pool
(decision/prefetch.py). The interaction lines read a `Chosen`, so the online report
(online/finish.py) names the same interactions in the same words from the climb's windows."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Sequence

from autotune.burst.result import BurstResult
from autotune.decision.epoch_time import EpochParts
from autotune.decision.thresholds import FALLEN
from autotune.decision.verdict import persistence_matters
from autotune.diagnosis.effects import describe_effect, knob_effect, workers_at
from autotune.diagnosis.measured import MeasuredConfig
from autotune.space.config import LoaderConfig

KNOB = "persistent_workers"
SAME = FALLEN  # within one measurement's noise: a tie, the cheaper count chosen


@dataclass(frozen=True)
class Chosen:
    """The chosen configuration as the interaction lines read it, from its burst (`of_burst`) or
    from the online climb's windows."""

    config: LoaderConfig
    parts: EpochParts  # in samples, as the trials' rates
    epoch_steps: int | None  # None: the loader has no length
    over_epochs: bool  # its rate holds an epoch's end (so every epoch's refill of its pool)


def of_burst(result: BurstResult) -> Chosen:
    steps = _epoch_steps(result) if result.epoch_samples else None
    return Chosen(result.config, result.epoch_parts, steps, result.window_epochs >= 1)


def interactions(chosen: Chosen, trials: Sequence[MeasuredConfig]) -> list[str]:
    """Each interaction of knobs that decided the choice: workers and persistence, prefetch depth
    and epoch length."""
    return interaction(chosen, trials) + depth_advice(chosen, trials)


def epoch_advice(result: BurstResult, trials: Sequence[MeasuredConfig]) -> list[str]:
    """One line on epoch restarts for a configuration with workers; none without (no pool)."""
    if result.config.num_workers == 0:
        return []
    if not result.epoch_samples:
        return [
            "the loader has no length, so epoch restarts were not counted: the rates assume"
            f" epochs far longer than a restart ({result.restart_cost_s:.2f} s measured for"
            " this configuration)"
        ]
    effect = knob_effect(trials, KNOB)
    share = result.restart_share
    persistent = bool(getattr(result.config, KNOB))
    # A persistent pool's own restart (its refill) says nothing of what a fresh one costs; its
    # burst's start-up does (decision/epoch_time.py): the rule of decision/verdict.py, the online
    # climb's too, reads that against an epoch without persistent workers.
    parts = result.epoch_parts
    matters = persistence_matters(
        parts.fresh_restart_s, parts.epoch_s(False), None if effect is None else effect.ratio - 1
    )
    restart = (
        f"an epoch ({result.epoch_samples} samples) restarts its pool in"
        f" {result.restart_cost_s:.2f} s beyond a steady step, {100 * share:.1f}% of the"
        f" epoch, {'with' if persistent else 'without'} persistent workers"
    )
    if matters is True:
        keep = "keep persistent_workers=True" if persistent else "use persistent_workers=True"
        line = (
            f"persistent_workers matters here: {restart}; {describe_effect(effect, KNOB)}"
            f" over whole epochs; {keep}"
        )
        return [line, *interaction(of_burst(result), trials)]
    return [
        f"persistent_workers does not matter here: {restart}; {describe_effect(effect, KNOB)}"
        " over whole epochs"
    ]


def interaction(chosen: Chosen, trials: Sequence[MeasuredConfig]) -> list[str]:
    """The interaction of workers and persistence behind a persistent choice: what a fresh pool's
    restart of its workers costs an epoch, and its worker count against the fastest other at
    persistent_workers=True (measured, or the epoch model's from a steady rate and restart measured
    without). None where restarts do not matter or no other worker count was measured."""
    config, parts = chosen.config, chosen.parts
    share, workers = parts.restart_share, config.num_workers
    at = workers_at(trials)
    if not config.persistent_workers or share is None or at.setting is not True:
        return []
    others = {n: one for n, one in at.by_workers.items() if n not in (0, workers)}
    if workers not in at.by_workers or not others:
        return []
    rival = max(others, key=lambda n: others[n].rate)
    mine, theirs = at.by_workers[workers].rate, others[rival].rate
    verb = _verb(mine, theirs)
    predicted = (
        f"; {rival} workers measured {others[rival].measured:.0f}/s without persistent workers,"
        " its rate at True the epoch model's"
        if at.predicted(rival)
        else ""
    )
    return [
        f"{KNOB}: the restart of {workers} workers costs {share:.0%} of a"
        f" {chosen.epoch_steps}-step epoch"
        f" without it; compared at {KNOB}=True, {workers} workers {verb} {rival}"
        f" ({mine:.0f} against {theirs:.0f} samples/s{predicted})"
    ]


def depth_advice(chosen: Chosen, trials: Sequence[MeasuredConfig]) -> list[str]:
    """The interaction of prefetch depth and epoch length behind the choice, where its rate was
    measured over an epoch's end (so every epoch's refill of the pool is in its rate:
    decision/prefetch.py): its depth against the fastest other depth measured with its other
    knobs alike, over whole epochs. None where no other depth was measured there."""
    config = chosen.config
    if config.num_workers == 0 or not chosen.epoch_steps or not chosen.over_epochs:
        return []
    alike = replace(config, prefetch_factor=None)
    by_depth: dict[int, list[float]] = {}
    for t in trials:
        if t.ok and t.samples_per_s and replace(t.config, prefetch_factor=None) == alike:
            by_depth.setdefault(t.config.effective_prefetch_factor, []).append(t.samples_per_s)
    depth = config.effective_prefetch_factor
    others = {d: statistics.median(rates) for d, rates in by_depth.items() if d != depth}
    if depth not in by_depth or not others:
        return []
    rival = max(others, key=lambda d: others[d])
    mine, theirs = statistics.median(by_depth[depth]), others[rival]
    return [
        f"prefetch_factor: each {chosen.epoch_steps}-step epoch refills the pool"
        f" ({config.num_workers} workers x {depth} batches sent at once); with the other"
        f" settings alike, prefetch_factor={depth} {_verb(mine, theirs)} {rival}"
        f" ({mine:.0f} against {theirs:.0f} samples/s over whole epochs)"
    ]


def _epoch_steps(result: BurstResult) -> int:
    batch = max(1, round(result.samples / max(1, result.steps)))
    return round((result.epoch_samples or 0) / batch)


def _verb(mine: float, theirs: float) -> str:
    return "beat" if mine > theirs else "tie with" if mine >= theirs * (1 - SAME) else "trail"
