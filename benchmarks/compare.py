"""Side-by-side measurement: configurations measured in alternation, in one run.

Each round measures every distinct configuration once, starting one further along each time, so
a slow patch of a shared machine falls on all of them alike rather than on whichever ran then.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

import torch

from autotune.burst.runner import BurstSettings, run_burst
from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload


@dataclass(frozen=True)
class Series:
    config: LoaderConfig
    rates: tuple[float, ...]
    peak_pss_mib: float

    @property
    def mean(self) -> float:
        return statistics.fmean(self.rates)

    @property
    def cv(self) -> float:
        return (
            statistics.stdev(self.rates) / self.mean if len(self.rates) > 1 and self.mean else 0.0
        )


def side_by_side(
    workload: Workload,
    device: torch.device,
    configs: list[LoaderConfig],
    settings: BurstSettings,
    rounds: int,
    *,
    usable_cpus: int,
    on_burst: Callable[[int, LoaderConfig, float], None] | None = None,
) -> dict[LoaderConfig, Series]:
    distinct = list(dict.fromkeys(configs))
    rates: dict[LoaderConfig, list[float]] = {c: [] for c in distinct}
    pss: dict[LoaderConfig, float] = {c: 0.0 for c in distinct}
    for r in range(rounds):
        for i in range(len(distinct)):
            config = distinct[(i + r) % len(distinct)]
            result = run_burst(workload, config, device, settings, usable_cpus=usable_cpus)
            rates[config].append(result.samples_per_s)
            pss[config] = max(pss[config], result.host.peak_pss_mib)
            if on_burst is not None:
                on_burst(r, config, result.samples_per_s)
    return {c: Series(c, tuple(rates[c]), pss[c]) for c in distinct}
