"""One way to average a configuration's rate, and one way to judge a difference against noise.

A configuration is measured in pieces: bursts offline, windows of the loop's steps online. Its
rate is their samples over their time together (`pooled_rate`). A plain mean of the pieces'
rates weighs a fast piece's few seconds as much as a slow one's many, which biases it upwards
wherever the pieces' lengths vary with their speed. The noise is the pooled relative spread of one
piece (`pooled_cv`), and two means are told apart beyond Z standard errors of their difference
(`tolerance`)."""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from autotune.decision.thresholds import TOLERANCE_FLOOR, Z


def pooled_rate(rates: Sequence[float], spans: Sequence[float]) -> float:
    """The pieces' work over their time: each rate weighted by the seconds it was measured over.
    0.0 where nothing was measured (a rate, never a figure shown: callers show None)."""
    total = sum(spans)
    if total <= 0:
        return statistics.fmean(rates) if rates else 0.0
    return sum(r * s for r, s in zip(rates, spans, strict=True)) / total


def pooled_sd(groups: Sequence[Sequence[float]]) -> float | None:
    """Pooled standard deviation of one value, over groups that each share one true value; None
    until some group has two."""
    num = dof = 0.0
    for values in groups:
        if len(values) < 2:
            continue
        num += (len(values) - 1) * statistics.variance(values)
        dof += len(values) - 1
    return math.sqrt(num / dof) if dof else None


def pooled_cv(groups: Sequence[Sequence[float]]) -> float | None:
    """Pooled relative standard deviation of one measurement, over groups of measurements of one
    configuration each (each relative to its group's mean); None until some group has two."""
    relative = []
    for rates in groups:
        if len(rates) >= 2 and (mean := statistics.fmean(rates)) > 0:
            relative.append([r / mean for r in rates])
    return pooled_sd(relative)


def measured_cv(rates: Sequence[float], noise_cv: float | None) -> float | None:
    """One measurement's relative noise for a figure averaged over `rates`: the wider of the noise
    measured elsewhere (`noise_cv`) and their own spread; None where neither is known."""
    cvs = [cv for cv in (noise_cv, pooled_cv([rates])) if cv is not None]
    return max(cvs) if cvs else None


def error_pct(rates: Sequence[float], noise_cv: float | None) -> float | None:
    """Z standard errors of the mean of `rates`, in % of it: the figure's error from burst noise.
    It assumes independent bursts: the machine's drift between minutes comes on top
    (results/bench/stated-error). None where the noise is unknown."""
    cv = measured_cv(rates, noise_cv)
    return None if cv is None or not rates else 100 * Z * cv / math.sqrt(len(rates))


def tolerance(cv: float | None, n_a: int, n_b: int) -> float:
    """How far below the best mean a mean may be and still count as tied: never narrower than
    the measured noise allows to tell apart."""
    if cv is None:
        return TOLERANCE_FLOOR
    return max(TOLERANCE_FLOOR, Z * cv * math.sqrt(1 / max(1, n_a) + 1 / max(1, n_b)))
