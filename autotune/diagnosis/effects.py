"""What the trials measured about single knobs: the evidence behind a recommendation."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Sequence

from autotune.decision.epoch_time import rate_at, shared_setting
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


def worker_setting(trials: Sequence[MeasuredConfig]) -> bool | None:
    """The persistence setting worker counts are compared at (decision/epoch_time.py's
    shared_setting over the trials' parts); None: each rate as measured."""
    return shared_setting(p for t in trials if t.ok for p in [t.epoch_parts] if p is not None)


@dataclass(frozen=True)
class ConfigRate:
    """A configuration's rate over whole epochs at the compared setting, and as measured."""

    config: LoaderConfig
    rate: float
    measured: float


@dataclass(frozen=True)
class WorkersAt:
    """At each worker count, its fastest configuration and that one's rate over whole epochs at
    `setting` (None: as measured), pooled over its measurements: a single burst is partly luck,
    and a re-measured configuration's best one the luckiest."""

    setting: bool | None
    by_workers: dict[int, ConfigRate]

    @property
    def rates(self) -> dict[int, float]:
        return {w: at.rate for w, at in self.by_workers.items()}

    def predicted(self, workers: int) -> bool:
        """Its rate is the model's for a setting it was not measured under."""
        config = self.by_workers[workers].config
        return (
            self.setting is not None
            and config.num_workers > 0
            and config.persistent_workers != self.setting
        )


def rates_at(
    trials: Sequence[MeasuredConfig], setting: bool | None
) -> dict[LoaderConfig, ConfigRate]:
    """Each configuration's rate over whole epochs at persistence `setting` (the epoch model's,
    decision/epoch_time.py; None: as measured), pooled over its measurements; one measured under
    both settings is read from its measurements under `setting` alone."""
    by_config: dict[LoaderConfig, list[tuple[float, float, float]]] = {}
    for t in trials:
        if t.ok and t.samples_per_s is not None:
            parts = t.epoch_parts
            rate = t.samples_per_s if parts is None else rate_at(parts, setting, t.samples_per_s)
            by_config.setdefault(t.config, []).append((rate, t.samples_per_s, t.span_s or 0.0))
    out = {}
    for config, m in by_config.items():
        twin = replace(config, persistent_workers=bool(setting)) if config.num_workers else config
        if setting is not None and twin != config and twin in by_config:
            continue  # measured under `setting` too: its own measurement, not the prediction

        rates, measured, spans = zip(*m, strict=True)
        out[config] = ConfigRate(config, pooled_rate(rates, spans), pooled_rate(measured, spans))
    return out


def workers_at(trials: Sequence[MeasuredConfig]) -> WorkersAt:
    """Rates by worker count, never a rate that paid a pool's restart every epoch against one
    that did not: where restarts matter, each is the epoch model's at one persistence setting."""
    setting = worker_setting(trials)
    best: dict[int, ConfigRate] = {}
    for at in rates_at(trials, setting).values():
        w = at.config.num_workers
        if w not in best or at.rate > best[w].rate:
            best[w] = at
    return WorkersAt(setting, dict(sorted(best.items())))


def mean_rate_by_workers(trials: Sequence[MeasuredConfig]) -> dict[int, float]:
    """At each worker count, the fastest configuration's pooled rate (`workers_at`)."""
    return workers_at(trials).rates


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
