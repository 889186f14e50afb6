"""Synthetic measurements for tests of the search's pure logic (no bursts run)."""

from __future__ import annotations

from autotune.burst.result import BurstResult
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostStats


def burst(
    config: LoaderConfig, samples_per_s: float, pss_mib: float = 500.0, duration_s: float = 1.0
) -> BurstResult:
    host = HostStats(
        cpu_pct=50.0,
        cpu_cores_used=1.0,
        peak_rss_mib=2 * pss_mib,
        peak_pss_mib=pss_mib,
        peak_workers=config.num_workers,
    )
    return BurstResult(
        config=config,
        samples_per_s=samples_per_s,
        steps=10,
        samples=int(samples_per_s),
        window_s=1.0,
        startup_s=0.1,
        warmup_s=0.1,
        duration_s=duration_s,
        steady=True,
        wait_s=0.1,
        copy_s=0.0,
        compute_s=0.9,
        device_copy_s=None,
        device_compute_s=None,
        host=host,
        gpu=None,
    )


def trials(
    *measurements: tuple[LoaderConfig, float] | tuple[LoaderConfig, float, float],
    status: str = TrialStatus.OK,
) -> list[TrialRecord]:
    """Trial records numbered in order: (config, samples/s[, peak PSS MiB]) each."""
    out = []
    for number, (config, rate, *pss) in enumerate(measurements):
        out.append(TrialRecord(number, config, status, result=burst(config, rate, *pss)))
    return out


def cfg(workers: int, prefetch: int | None = 2, **knobs: bool) -> LoaderConfig:
    return LoaderConfig(num_workers=workers, prefetch_factor=prefetch if workers else None, **knobs)


class Clock:
    """A fake clock for the budget: a test moves `now` by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now
