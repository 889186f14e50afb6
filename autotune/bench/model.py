"""The bench's results as typed JSON: one row per workload, and the run around them."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MeasuredConfig(_Strict):
    """One configuration of the side-by-side run, and the roles it played there."""

    roles: list[str]  # tuned, tuned (seed 1), grid best, grid second, defaults, heuristic
    label: str
    params: dict[str, Any]
    samples_per_s: list[float]
    mean: float
    cv: float
    peak_pss_mib: float


class BenchRow(_Strict):
    key: str
    spec: str
    what: str
    held_out: bool
    compute_bound: bool
    usable_cpus: int
    tuned: str
    tuned_workers: int
    grid_best: str
    grid_best_workers: int
    tuned_samples_per_s: float
    grid_best_samples_per_s: float
    tuned_vs_grid: float
    tune_s: float
    budget_s: float
    grid_s: float
    grid_points: int
    grid_covers: str
    grid_rejected: int
    tune_share_of_grid: float
    defaults_samples_per_s: float
    heuristic_samples_per_s: float
    speedup_vs_defaults: float
    speedup_vs_heuristic: float
    device_ceiling_samples_per_s: float | None
    loader_ceiling_samples_per_s: float | None
    ceiling_share: float | None  # side-by-side tuned mean / min(device, loader at its workers)
    tuner_trials: int
    tuner_remeasured: int
    tuner_pruned: int
    tuner_noise_pct: float | None
    tuner_stop: str
    second_tuned: str | None
    stability_diff: float | None  # |tuned - second tuning| / the larger, side by side
    side_by_side: list[MeasuredConfig]
    targets: dict[str, bool | None]


class BenchReport(_Strict):
    created: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    command: str
    quick: bool
    environment: dict[str, Any]
    tuner_budget_s: float
    burst: dict[str, Any]  # the tuner's trials and every grid point
    side_by_side_burst: dict[str, Any]
    rounds: int
    total_s: float
    rows: list[BenchRow]

    def targets_met(self) -> dict[str, bool | None]:
        """Each target over the rows where it applies (None: it applied to none)."""
        names = sorted({name for row in self.rows for name in row.targets})
        met: dict[str, bool | None] = {}
        for name in names:
            verdicts = [row.targets[name] for row in self.rows if row.targets.get(name) is not None]
            met[name] = all(verdicts) if verdicts else None
        return met
