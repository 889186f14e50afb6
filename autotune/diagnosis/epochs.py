"""Whether epoch restarts matter for this workload, and so whether persistent_workers does.

Drawn from the tuned burst's own restart cost (burst/epoch.py) and, where trials differ in
persistent_workers alone, from their measured rates over whole epochs."""

from __future__ import annotations

from typing import Sequence

from autotune.burst.result import BurstResult
from autotune.decision.verdict import persistence_matters
from autotune.diagnosis.effects import describe_effect, knob_effect
from autotune.diagnosis.measured import MeasuredConfig

KNOB = "persistent_workers"


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
    # A persistent pool's own restart says nothing of what a fresh one costs: only the measured
    # gain counts for it (decision/verdict.py, the online climb's rule too).
    matters = persistence_matters(
        None if persistent else result.restart_cost_s,
        result.epoch_s,
        None if effect is None else effect.ratio - 1,
    )
    restart = (
        f"an epoch ({result.epoch_samples} samples) restarts its pool in"
        f" {result.restart_cost_s:.2f} s beyond a steady step, {100 * share:.1f}% of the"
        f" epoch, {'with' if persistent else 'without'} persistent workers"
    )
    if matters is True:
        keep = "keep persistent_workers=True" if persistent else "use persistent_workers=True"
        return [
            f"persistent_workers matters here: {restart}; {describe_effect(effect, KNOB)}"
            f" over whole epochs; {keep}"
        ]
    return [
        f"persistent_workers does not matter here: {restart}; {describe_effect(effect, KNOB)}"
        " over whole epochs"
    ]
