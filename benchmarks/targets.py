"""The bench's targets, and which of them a workload's figures meet (None: does not apply).

Each is judged on the WORST of the workload's tunings (see worst.py): a tuner that meets a target
only on its lucky seeds does not meet it."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from autotune.decision.thresholds import RECORDED_WITHIN

MIN_TUNED_VS_GRID = 0.97  # worst tuned throughput / grid-best throughput, measured side by side
MAX_TUNE_SHARE_OF_GRID = 0.15  # tuning wall time / exhaustive grid wall time
MAX_COMPUTE_BOUND_WORKERS = 2
MAX_STABILITY_DIFF = 0.03  # the tunings' chosen configurations, (fastest - slowest) / fastest
MAX_RECORDED_VS_VERIFIED = (
    RECORDED_WITHIN  # |recorded - verified| / verified, the recipe's own figure
)
MAX_BURST_VS_STEADY = 0.05  # accuracy table: |burst median / steady median - 1|
# `autotune bench --online`: the online loader's throughput over the grid best's from step 0, over
# the whole run (its exploration included) and over the steps after its exploration ended.
MIN_ONLINE_WHOLE = 0.95
MIN_ONLINE_AFTER = 0.97
# "More workers than cores is faster" when the grid's best beyond the cores beats its best within
# them by more than this: below it, single grid bursts cannot tell them apart.
BEYOND_CORES_GAIN = 0.05


def beyond_cores_faster(rates_by_workers: list[tuple[int, float]], usable_cpus: int) -> bool:
    """From the grid's (workers, samples/s) points."""
    within = max((r for w, r in rates_by_workers if w <= usable_cpus), default=0.0)
    beyond = max((r for w, r in rates_by_workers if w > usable_cpus), default=0.0)
    return beyond > (1 + BEYOND_CORES_GAIN) * within


def evaluate(
    *,
    tuned_vs_grid: float,
    tune_s: float,
    budget_s: float,
    grid_s: float,
    grid_exhaustive: bool,
    tuned_workers: Sequence[int],
    usable_cpus: int,
    compute_bound: bool,
    beyond_cores_faster: bool,
    stability_diff: float | None,
    recorded_vs_verified: float | None = None,
) -> dict[str, bool | None]:
    """`tuned_vs_grid`, `tune_s` and `recorded_vs_verified` are the worst tunings' figures;
    `tuned_workers` holds every tuning's worker count, and the worker targets hold for all."""
    return {
        "tuned_vs_grid": tuned_vs_grid >= MIN_TUNED_VS_GRID,
        "within_budget": tune_s <= budget_s,
        # Only against the whole space: a reduced grid is not what exhaustive search costs.
        "tune_share_of_grid": (
            tune_s <= MAX_TUNE_SHARE_OF_GRID * grid_s if grid_exhaustive else None
        ),
        "compute_bound_few_workers": (
            max(tuned_workers) <= MAX_COMPUTE_BOUND_WORKERS if compute_bound else None
        ),
        "beyond_cores_when_faster": (
            min(tuned_workers) > usable_cpus if beyond_cores_faster else None
        ),
        "stable": None if stability_diff is None else stability_diff < MAX_STABILITY_DIFF,
        "recorded_vs_verified": (
            None
            if recorded_vs_verified is None
            else abs(recorded_vs_verified) <= MAX_RECORDED_VS_VERIFIED
        ),
    }


def burst_within_steady(ratio: float | None) -> bool | None:
    """Accuracy table: a burst median within ±MAX_BURST_VS_STEADY of the steady median."""
    return None if ratio is None else abs(ratio - 1) <= MAX_BURST_VS_STEADY


def online_targets(whole: float, after: float | None) -> dict[str, bool | None]:
    """`autotune bench --online`, on the worst round's figures (after: None where the online
    loader never ended exploring)."""
    return {
        "online_whole": whole >= MIN_ONLINE_WHOLE,
        "online_after": None if after is None else after >= MIN_ONLINE_AFTER,
    }


def targets_met(verdicts_by_row: Iterable[Mapping[str, bool | None]]) -> dict[str, bool | None]:
    """Each target over the rows where it applies (None: it applied to none)."""
    rows = list(verdicts_by_row)
    names = sorted({name for row in rows for name in row})
    met: dict[str, bool | None] = {}
    for name in names:
        verdicts = [row[name] for row in rows if row.get(name) is not None]
        met[name] = all(verdicts) if verdicts else None
    return met
