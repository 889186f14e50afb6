"""The bench's results as typed JSON: one row per workload, and the run around them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks.provenance import Recorded
from benchmarks.targets import targets_met


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MeasuredConfig(_Strict):
    """One configuration of the side-by-side run, and the roles it played there."""

    roles: list[
        str
    ]  # tuned (seed 0), tuned (seed 1), ..., grid best, grid second, defaults, heuristic
    label: str
    params: dict[str, Any]
    samples_per_s: list[float]
    mean: float
    cv: float
    peak_pss_mib: float


class TuningRecord(_Strict):
    """One of a workload's tunings (one seed), and how it scored."""

    seed: int
    tuned: str
    params: dict[str, Any]
    tune_s: float
    stop: str
    trials: int
    remeasured: int
    pruned: int
    noise_pct: float | None
    recorded_samples_per_s: float  # its recipe's figure
    recorded_error_pct: float | None = None  # the recipe's stated error (null: none stated)
    side_by_side_samples_per_s: float  # its configuration's mean in the side-by-side run
    tuned_vs_grid: float
    speedup_vs_defaults: float
    speedup_vs_heuristic: float
    verified_samples_per_s: float | None  # steady measurement, median of the rounds
    verified_rounds: list[float]
    recorded_vs_verified: float | None  # (recorded - verified) / verified
    device_ceiling_samples_per_s: float | None
    loader_ceiling_samples_per_s: float | None
    ceiling_share: float | None
    worst_in: list[str]  # the measures on which this tuning is the worst (tuned_vs_grid, ...)
    # The recipe's tie: the configurations it could not tell apart from the tuned one, the
    # interleaved pairs behind that verdict (0: independent means), whether it was resolved.
    tied_with: list[str] | None = None
    tie_pairs: int | None = None
    ties_resolved: bool | None = None


class BenchRow(_Strict):
    """A workload's figures. The flat tuned* / tune_s / recorded* figures are those of the WORST
    tuning on each measure (`tuned_seed`, `tune_s_seed`, `recorded_vs_verified_seed` say which);
    every tuning is in `tunings`."""

    key: str
    spec: str
    what: str
    held_out: bool
    compute_bound: bool
    usable_cpus: int
    tuned: str  # the configuration of the tuning with the worst tuned / grid best
    tuned_seed: int
    tuned_workers: int
    grid_best: str
    grid_best_workers: int
    tuned_samples_per_s: float
    grid_best_samples_per_s: float
    tuned_vs_grid: float  # the worst of the tunings
    tune_s: float  # the longest of the tunings
    tune_s_seed: int
    budget_s: float
    grid_s: float
    grid_points: int
    grid_covers: str
    grid_rejected: int
    tune_share_of_grid: float
    defaults_samples_per_s: float
    heuristic_samples_per_s: float
    speedup_vs_defaults: float  # of the tuning with the worst tuned / grid best
    speedup_vs_heuristic: float
    device_ceiling_samples_per_s: float | None
    loader_ceiling_samples_per_s: float | None
    ceiling_share: float | None  # side-by-side tuned mean / min(device, loader at its workers)
    tuner_trials: int
    tuner_remeasured: int
    tuner_pruned: int
    tuner_noise_pct: float | None
    tuner_stop: str
    recorded_samples_per_s: float | None  # of the tuning farthest from its verified rate
    verified_samples_per_s: float | None
    recorded_vs_verified: float | None  # (recorded - verified) / verified, the largest in size
    recorded_vs_verified_seed: int | None
    stability_diff: float | None  # (fastest - slowest) / fastest of the tunings, side by side
    tunings: list[TuningRecord]
    side_by_side: list[MeasuredConfig]
    targets: dict[str, bool | None]


class BenchReport(Recorded):
    quick: bool
    environment: dict[str, Any]
    tuner_budget_s: float
    burst: dict[str, Any]  # the tuner's trials and every grid point
    side_by_side_burst: dict[str, Any]
    rounds: int
    tunings: int  # per workload, seeds 0 .. tunings-1
    verify: dict[str, Any]  # the steady measurement of the tuned configurations: seconds, rounds
    total_s: float
    rows: list[BenchRow]

    def targets_met(self) -> dict[str, bool | None]:
        return targets_met(row.targets for row in self.rows)


class AccuracyRow(_Strict):
    """One configuration of one workload: its burst rates against its steady rates."""

    workload: str
    spec: str
    config: str
    params: dict[str, Any]
    burst_samples_per_s: list[float]
    burst_median: float | None
    steady_samples_per_s: list[float]
    steady_median: float | None
    ratio: float | None  # burst median / steady median
    within: bool | None  # |ratio - 1| <= the target
    error: str | None = None  # the configuration could not be measured


class AccuracyReport(Recorded):
    quick: bool
    environment: dict[str, Any]
    burst: dict[str, Any]  # the settings each burst ran with
    as_trials: bool = True  # those of the tuner's trials (files before the option: always)
    # Which comes first alternates round by round (burst first in round 1); files before: the
    # burst always first.
    order_alternates: bool = False
    steady_seconds: float
    settle_s: float
    rounds: int
    total_s: float
    rows: list[AccuracyRow]

    def within(self) -> bool | None:
        verdicts = [r.within for r in self.rows if r.within is not None]
        return all(verdicts) if verdicts else None
