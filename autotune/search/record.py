"""The record: the chosen configuration measured after the choice, for the recipe's rate.

The first record burst always runs, in the budget's reserve for it (budget.record_reserve). One
burst is one sample of a noisy machine, and a single record taken in a slow moment reads well
below the steady rate (results/bench/deep-storage-noise). So more record bursts follow, until
the record's standard error is down to TARGET of its rate at its noise
(choose.Choice.record_noise_cv, which sees the chosen configuration's own scatter), at most
MAX_RECORD_BURSTS. The tie rounds of the re-measurements keep back the time for as many as the
noise measured so far calls for (phases._remeasure). Further bursts, where the record's own
spread asks for them, run in what is left."""

from __future__ import annotations

import math
from typing import Protocol

from autotune.decision.rate import measured_cv
from autotune.decision.thresholds import MAX_RECORD_BURSTS, TARGET
from autotune.search.budget import Budget
from autotune.search.interrupt import StopSignals
from autotune.search.trial import Phase, TrialRecord
from autotune.space.config import LoaderConfig

# A noise unknown (one burst, nothing re-measured twice) is not taken as none: a second burst
# measures it.
UNKNOWN_NOISE_BURSTS = 2


class RecordRunner(Protocol):
    """What the record reads of a TrialRunner."""

    stop: StopSignals
    budget: Budget

    def run(self, config: LoaderConfig, phase: Phase) -> TrialRecord | None: ...


def bursts_needed(rates: list[float], noise_cv: float | None) -> int:
    """Record bursts for a mean within TARGET (one standard error) of the rate: the wider of the
    re-measurements' noise and the record bursts' own spread decides."""
    cv = measured_cv(rates, noise_cv)
    if cv is None:
        return UNKNOWN_NOISE_BURSTS
    return max(1, min(MAX_RECORD_BURSTS, math.ceil((cv / TARGET) ** 2)))


def record(
    runner: RecordRunner, config: LoaderConfig, noise_cv: float | None, after_s: float = 0.0
) -> None:
    """Record bursts of `config` (choose.record_bursts): the first whatever the budget left, the
    others while the noise asks for them and a slow burst still fits with `after_s` left for what
    follows (the loader probe at the chosen configuration, which the report reads). Only a signal
    leaves the first out, or a burst that fails (the recipe then records the re-measurements'
    mean, and says so); a failed later one ends the record with what it measured."""
    rates: list[float] = []
    while not runner.stop.requested:
        done = runner.run(config, Phase.RECORD)
        if done is None or not done.ok:
            return
        rates.append(done.rate)
        if len(rates) >= bursts_needed(rates, noise_cv) or not runner.budget.fits_another(
            after_s=after_s
        ):
            return
