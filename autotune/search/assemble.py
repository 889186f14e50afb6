"""From trials to what a tuning reports: the choice, its representative measurement, the baseline,
every trial's verdict and the recipe.

One assembly serves the tuner and the merge of a shared study (cluster/merge.py), so both
recipes carry the same figures: the noise, the measurements, the ties and the diagnosis.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from autotune.decision.rate import error_pct
from autotune.diagnosis import Context, diagnose, explain
from autotune.diagnosis.evidence import KnownCeilings
from autotune.diagnosis.stage_advice import with_stages
from autotune.probe.ceilings import Ceilings
from autotune.profiling.stage_run import StageProfile
from autotune.recipe.build import build_recipe
from autotune.recipe.model import RateSource, Recipe
from autotune.search.choose import Choice, choose, find_baseline, group, recorded
from autotune.search.trial import TrialRecord, trial_counts


@dataclass
class Outcome:
    trials: list[TrialRecord]
    choice: Choice | None  # None: nothing succeeded
    best: TrialRecord | None  # the chosen configuration's measurement closest to its mean
    baseline: TrialRecord | None
    context: Context | None = None  # what the verdicts were judged against (set by `assemble`)
    recipe: Recipe | None = None


def pick(trials: list[TrialRecord]) -> Outcome:
    """The cheapest configuration within noise of the fastest, and PyTorch's defaults."""
    choice = choose(group(trials))
    best = choice.chosen.representative() if choice is not None else None
    return Outcome(trials, choice, best, find_baseline([t for t in trials if t.measured]))


def _ceiling_fields(
    context: Context, ceilings: Ceilings, choice: Choice, rate: float
) -> tuple[Context, dict[str, Any]]:
    """The context with the loader ceiling at the chosen configuration's DataLoader arguments, and
    the recipe's figures (the share of that bound that the recorded `rate` reaches)."""
    config = choice.chosen.config
    loader, bound = ceilings.loader_for(config), ceilings.bound_for(config)
    context = replace(context, ceilings=KnownCeilings(ceilings.device_samples_per_s, loader))
    return context, dict(
        device_ceiling_samples_per_s=ceilings.device_samples_per_s,
        device_warmup_s=ceilings.warmup_s,
        loader_ceiling_samples_per_s=loader,
        ceiling_share=None if not bound else rate / bound,
        probes=ceilings.as_dict(),
        fetch=None if ceilings.fetch is None else ceilings.fetch.as_dict(),
    )


def _rate_fields(outcome: Outcome, choice: Choice) -> dict[str, Any]:
    """The recipe's rate: the record bursts' pooled rate where there are any, else the
    re-measurements' mean (choose.recorded); either with its error at the measured noise."""
    figure = recorded(choice.chosen, outcome.trials)
    shown = figure.shown
    return dict(
        samples_per_s=shown.mean,
        measurements=shown.n,
        rate_from=RateSource.RECORD if figure.fresh else RateSource.REMEASURED,
        **_error(list(shown.fresh), choice),
    )


def _error(rates: list[float], choice: Choice) -> dict[str, Any]:
    return dict(samples_per_s_error_pct=error_pct(rates, choice.record_noise_cv))


def _choice_fields(choice: Choice) -> dict[str, Any]:
    return dict(
        noise_cv=choice.noise_cv,
        fastest_samples_per_s=choice.fastest.mean,
        tied_with=[c.config.label() for c in choice.ties] or None,
        tie_band_pct=100 * choice.band,
        ties_resolved=choice.resolved,
        tie_pairs=choice.pairs if choice.ties else None,
    )


def _diagnose(outcome: Outcome, context: Context, stages: StageProfile | None = None) -> None:
    for t in outcome.trials:  # trials read back from a study come without a verdict
        if t.ok and t.diagnosis is None:
            t.diagnosis = diagnose(t.burst, context)
    # The tuned and the default configuration get recommendations drawn from all trials.
    chosen = (t for t in (outcome.best, outcome.baseline) if t is not None and t.ok)
    for t in {id(t): t for t in chosen}.values():
        t.diagnosis = explain(t.burst, outcome.trials, context)
    if stages is not None and outcome.best is not None and outcome.best.diagnosis is not None:
        outcome.best.diagnosis = with_stages(outcome.best.diagnosis, stages, context.usable_cpus)


def assemble(
    outcome: Outcome,
    context: Context,
    *,
    workload: dict[str, Any],
    device: torch.device,
    ceilings: Ceilings | None = None,
    where: dict[str, Any] | None = None,
    stages: StageProfile | None = None,
    **extra: Any,
) -> Outcome:
    """Judge every trial and build the recipe, in place. `where` adds to the environment block
    (the best trial's origin); `stages`, the chosen configuration's timed stages, go into its
    diagnosis; `extra` adds to the recipe's measured block (raw figures: recipe/measured.py
    rounds them)."""
    measured: dict[str, Any] = {}
    rate = _rate_fields(outcome, outcome.choice) if outcome.choice is not None else {}
    if ceilings is not None and outcome.choice is not None:
        context, measured = _ceiling_fields(
            context, ceilings, outcome.choice, rate["samples_per_s"]
        )
    outcome.context = context
    _diagnose(outcome, context, stages)
    choice, best, baseline = outcome.choice, outcome.best, outcome.baseline
    if choice is None or best is None:
        return outcome
    assert best.diagnosis is not None  # _diagnose judged every trial that ran, the best among them
    outcome.recipe = build_recipe(
        best.burst,
        baseline.burst if baseline and baseline.ok else None,
        workload,
        device,
        environment_block={**(best.origin or {}), **(where or {})},
        diagnosis=best.diagnosis.to_record(),
        **rate,
        **trial_counts(outcome.trials),
        **measured,
        **_choice_fields(choice),
        **extra,
    )
    return outcome
