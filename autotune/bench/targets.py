"""The bench's targets, and which of them a workload's figures meet (None: does not apply)."""

from __future__ import annotations

MIN_TUNED_VS_GRID = 0.97  # tuned throughput / grid-best throughput, measured side by side
MAX_TUNE_SHARE_OF_GRID = 0.15  # tuning wall time / exhaustive grid wall time
MAX_COMPUTE_BOUND_WORKERS = 2
MAX_STABILITY_DIFF = 0.03  # two tunings' chosen configurations, relative throughput difference
# "More workers than cores is faster" when the grid's best beyond the cores beats its best within
# them by more than this: below it, single grid bursts cannot tell them apart.
BEYOND_CORES_GAIN = 0.05


def beyond_cores_faster(rates_by_workers: list[tuple[int, float]], usable_cpus: int) -> bool:
    """From the grid's (workers, samples/s) points."""
    within = max((r for w, r in rates_by_workers if w <= usable_cpus), default=0.0)
    beyond = max((r for w, r in rates_by_workers if w > usable_cpus), default=0.0)
    return beyond > (1 + BEYOND_CORES_GAIN) * within


def evaluate(*, tuned_vs_grid: float, tune_s: float, budget_s: float, grid_s: float,
             grid_exhaustive: bool, tuned_workers: int, usable_cpus: int, compute_bound: bool,
             beyond_cores_faster: bool, stability_diff: float | None) -> dict[str, bool | None]:
    return {
        "tuned_vs_grid": tuned_vs_grid >= MIN_TUNED_VS_GRID,
        "within_budget": tune_s <= budget_s,
        # Only against the whole space: a reduced grid is not what exhaustive search costs.
        "tune_share_of_grid": (tune_s <= MAX_TUNE_SHARE_OF_GRID * grid_s
                               if grid_exhaustive else None),
        "compute_bound_few_workers": (tuned_workers <= MAX_COMPUTE_BOUND_WORKERS
                                      if compute_bound else None),
        "beyond_cores_when_faster": tuned_workers > usable_cpus if beyond_cores_faster else None,
        "stable": None if stability_diff is None else stability_diff < MAX_STABILITY_DIFF,
    }
