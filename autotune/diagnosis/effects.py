"""What the trials measured about single knobs: the evidence behind a recommendation."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from autotune.decision.rate import pooled_rate
from autotune.diagnosis.measured import MeasuredConfig
from autotune.space.config import LoaderConfig


@dataclass(frozen=True)
class KnobEffect:
    knob: str
    ratio: float  # median rate with the knob on over the same settings with it off
    pairs: int


def knob_effect(trials: Sequence[MeasuredConfig], knob: str) -> KnobEffect | None:
    """Median on/off rate ratio over pairs of trials that differ in `knob` alone."""
    rates: dict[LoaderConfig, float] = {
        t.config: t.samples_per_s for t in trials if t.ok and t.samples_per_s
    }
    ratios = [
        rate / rates[off]
        for config, rate in rates.items()
        if getattr(config, knob)
        for off in [config.with_knob(knob, False)]
        if off in rates
    ]
    return KnobEffect(knob, statistics.median(ratios), len(ratios)) if ratios else None


def _best_by_workers(rates: list[tuple[LoaderConfig, float]]) -> dict[int, float]:
    best: dict[int, float] = {}
    for config, rate in rates:
        w = config.num_workers
        best[w] = max(best.get(w, 0.0), rate)
    return dict(sorted(best.items()))


def best_rate_by_workers(trials: Sequence[MeasuredConfig]) -> dict[int, float]:
    """The fastest single burst at each worker count."""
    return _best_by_workers(
        [(t.config, t.samples_per_s) for t in trials if t.ok and t.samples_per_s is not None]
    )


def mean_rate_by_workers(trials: Sequence[MeasuredConfig]) -> dict[int, float]:
    """At each worker count, the fastest configuration's mean over its measurements: a single
    burst is partly luck, and a re-measured configuration's best one the luckiest."""
    by_config: dict[LoaderConfig, list[tuple[float, float]]] = {}
    for t in trials:
        if t.ok and t.samples_per_s is not None:
            by_config.setdefault(t.config, []).append((t.samples_per_s, t.span_s or 0.0))
    return _best_by_workers([(c, pooled_rate(*zip(*m, strict=True))) for c, m in by_config.items()])


def fewest_workers_within(
    trials: Sequence[MeasuredConfig], rate: float, tolerance: float
) -> int | None:
    """The fewest workers measured within `tolerance` (a fraction) of `rate`."""
    for workers, best in best_rate_by_workers(trials).items():
        if best >= rate * (1 - tolerance):
            return workers
    return None


def workers_measured_faster(trials: Sequence[MeasuredConfig], tolerance: float) -> bool | None:
    """Whether some worker count's mean beat num_workers=0's by more than `tolerance` (a
    fraction), each at its fastest configuration; None where either was not measured."""
    means = mean_rate_by_workers(trials)
    alone = means.get(0)
    workers = [rate for w, rate in means.items() if w > 0]
    if alone is None or not workers:
        return None
    return max(workers) > alone * (1 + tolerance)


def describe_effect(effect: KnobEffect | None, knob: str) -> str:
    if effect is None:
        return f"{knob}=True was not measured against the same settings without it"
    change = 100 * (effect.ratio - 1)
    word = "faster" if change >= 0 else "slower"
    pairs = f"{effect.pairs} pair" + ("s" if effect.pairs != 1 else "")
    return f"{knob}=True measured {abs(change):.0f}% {word} than without it ({pairs} of trials)"
