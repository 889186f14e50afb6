"""One workload's bench figures, from what its run measured, as a typed BenchRow."""

from __future__ import annotations

from dataclasses import dataclass

from autotune.bench.compare import Series
from autotune.bench.grid import GridRun
from autotune.bench.model import BenchRow, MeasuredConfig
from autotune.bench.targets import beyond_cores_faster, evaluate
from autotune.bench.workloads import BenchWorkload
from autotune.search.trial import REJECTED, trial_counts
from autotune.search.tuner import TuneResult
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig

# The roles a configuration can play in the side-by-side run.
TUNED, SECOND, GRID_BEST, GRID_SECOND = "tuned", "tuned (seed 1)", "grid best", "grid second"
DEFAULTS, HEURISTIC = "defaults", "heuristic"


@dataclass
class WorkloadRun:
    bench: BenchWorkload
    budget_s: float
    usable_cpus: int
    tuned: TuneResult
    second: TuneResult | None
    grid: GridRun
    grid_covers: str
    grid_exhaustive: bool
    roles: dict[str, LoaderConfig]
    series: dict[LoaderConfig, Series]  # the side-by-side measurements, per distinct config

    def mean(self, role: str) -> float:
        return self.series[self.roles[role]].mean

    def grid_best(self) -> LoaderConfig:
        """The faster, re-measured side by side, of the grid's two fastest points."""
        top = [self.roles[r] for r in (GRID_BEST, GRID_SECOND) if r in self.roles]
        return max(top, key=lambda c: self.series[c].mean)


def roles_by_config(roles: dict[str, LoaderConfig]) -> dict[LoaderConfig, list[str]]:
    by_config: dict[LoaderConfig, list[str]] = {}
    for role, config in roles.items():
        by_config.setdefault(config, []).append(role)
    return by_config


def _side_by_side(run: WorkloadRun) -> list[MeasuredConfig]:
    by_config = roles_by_config(run.roles)
    return [MeasuredConfig(roles=by_config[c], label=c.label(), params=c.as_dict(),
                           samples_per_s=[round(r, 2) for r in s.rates], mean=round(s.mean, 2),
                           cv=round(s.cv, 4), peak_pss_mib=round(s.peak_pss_mib, 1))
            for c, s in run.series.items()]


def bench_row(run: WorkloadRun) -> BenchRow:
    tuned, grid_best = run.tuned, run.grid_best()
    config = run.roles[TUNED]
    rate, grid_rate = run.mean(TUNED), run.series[grid_best].mean
    stability = None
    if SECOND in run.roles:
        other = run.mean(SECOND)
        stability = abs(rate - other) / max(rate, other)
    ceilings, m = tuned.ceilings, tuned.recipe.measured
    bound = ceilings.bound_at(config.num_workers) if ceilings is not None else None
    counts = trial_counts(tuned.trials)
    targets = evaluate(
        tuned_vs_grid=rate / grid_rate, tune_s=tuned.elapsed_s, budget_s=run.budget_s,
        grid_s=run.grid.elapsed_s, grid_exhaustive=run.grid_exhaustive,
        tuned_workers=config.num_workers, usable_cpus=run.usable_cpus,
        compute_bound=run.bench.compute_bound, stability_diff=stability,
        beyond_cores_faster=beyond_cores_faster(
            [(p.config.num_workers, p.samples_per_s) for p in run.grid.ranked()], run.usable_cpus))
    bw = run.bench
    return BenchRow(
        key=bw.key, spec=bw.spec, what=bw.what, held_out=bw.held_out,
        compute_bound=bw.compute_bound, usable_cpus=run.usable_cpus,
        tuned=config.label(), tuned_workers=config.num_workers,
        grid_best=grid_best.label(), grid_best_workers=grid_best.num_workers,
        tuned_samples_per_s=round(rate, 2), grid_best_samples_per_s=round(grid_rate, 2),
        tuned_vs_grid=round(rate / grid_rate, 4), tune_s=round(tuned.elapsed_s, 2),
        budget_s=run.budget_s, grid_s=round(run.grid.elapsed_s, 2),
        grid_points=len(run.grid.points), grid_covers=run.grid_covers,
        grid_rejected=sum(1 for p in run.grid.points if p.status == REJECTED),
        tune_share_of_grid=round(tuned.elapsed_s / run.grid.elapsed_s, 4),
        defaults_samples_per_s=round(run.mean(DEFAULTS), 2),
        heuristic_samples_per_s=round(run.mean(HEURISTIC), 2),
        speedup_vs_defaults=round(rate / run.mean(DEFAULTS), 3),
        speedup_vs_heuristic=round(rate / run.mean(HEURISTIC), 3),
        device_ceiling_samples_per_s=m.device_ceiling_samples_per_s,
        loader_ceiling_samples_per_s=m.loader_ceiling_samples_per_s,
        ceiling_share=None if not bound else round(rate / bound, 3),
        tuner_trials=counts["trials"], tuner_remeasured=counts["remeasured"],
        tuner_pruned=counts["pruned"], tuner_noise_pct=m.noise_pct, tuner_stop=tuned.stop_reason,
        second_tuned=None if run.second is None else run.second.config.label(),
        stability_diff=None if stability is None else round(stability, 4),
        side_by_side=_side_by_side(run), targets=targets)


def default_roles(tuned: TuneResult, second: TuneResult | None, grid: GridRun,
                  heuristic: LoaderConfig) -> dict[str, LoaderConfig]:
    ranked = grid.ranked()
    roles = {TUNED: tuned.config, GRID_BEST: ranked[0].config, DEFAULTS: PYTORCH_DEFAULTS,
             HEURISTIC: heuristic}
    if len(ranked) > 1:
        roles[GRID_SECOND] = ranked[1].config
    if second is not None:
        roles[SECOND] = second.config
    return roles
