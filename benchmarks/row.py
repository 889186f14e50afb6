"""One workload's bench figures, from what its run measured, as a typed BenchRow."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from autotune.search.result import TuneResult
from autotune.search.trial import TrialStatus, trial_counts
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from benchmarks.compare import Series
from benchmarks.grid import GridRun
from benchmarks.model import BenchRow, MeasuredConfig, TuningRecord
from benchmarks.targets import beyond_cores_faster, evaluate
from benchmarks.workloads import BenchWorkload
from benchmarks.worst import TuningFigures, worst_of

# The roles a configuration can play in the side-by-side run (and tuned_role(seed) for each tuning).
GRID_BEST, GRID_SECOND = "grid best", "grid second"
DEFAULTS, HEURISTIC = "defaults", "heuristic"


def shown_seconds(seconds: float) -> float:
    """A tuning's wall time as the bench records it: rounded UP to 10 ms, so that a time is never
    shown shorter than it took, and "within the budget" reads the same on the figure as on the
    clock (a 10.004 s tuning of a 10 s budget is 10.01 s, over it)."""
    return math.ceil(round(seconds * 100, 6)) / 100


def tuned_role(seed: int) -> str:
    return f"tuned (seed {seed})"


@dataclass
class WorkloadRun:
    bench: BenchWorkload
    budget_s: float
    usable_cpus: int
    tunings: list[tuple[int, TuneResult]]  # (seed, its result), in seed order
    grid: GridRun
    grid_covers: str
    grid_exhaustive: bool
    roles: dict[str, LoaderConfig]
    series: dict[LoaderConfig, Series]  # the side-by-side measurements, per distinct config
    # Each tuning's steady measurement, taken right after it (rates per window), by seed.
    verified: dict[int, list[float]] = field(default_factory=dict)

    def mean(self, role: str) -> float:
        return self.series[self.roles[role]].mean

    def grid_best(self) -> LoaderConfig:
        """The faster, re-measured side by side, of the grid's two fastest points."""
        top = [self.roles[r] for r in (GRID_BEST, GRID_SECOND) if r in self.roles]
        return max(top, key=lambda c: self.series[c].mean)

    def verified_median(self, seed: int) -> float | None:
        rates = self.verified.get(seed)
        return statistics.median(rates) if rates else None


def roles_by_config(roles: dict[str, LoaderConfig]) -> dict[LoaderConfig, list[str]]:
    by_config: dict[LoaderConfig, list[str]] = {}
    for role, config in roles.items():
        by_config.setdefault(config, []).append(role)
    return by_config


def _side_by_side(run: WorkloadRun) -> list[MeasuredConfig]:
    by_config = roles_by_config(run.roles)
    return [
        MeasuredConfig(
            roles=by_config[c],
            label=c.label(),
            params=c.as_dict(),
            samples_per_s=[round(r, 2) for r in s.rates],
            mean=round(s.mean, 2),
            cv=round(s.cv, 4),
            peak_pss_mib=round(s.peak_pss_mib, 1),
        )
        for c, s in run.series.items()
    ]


def figures(run: WorkloadRun) -> list[TuningFigures]:
    grid_rate = run.series[run.grid_best()].mean
    return [
        TuningFigures(
            seed=seed,
            config=result.config,
            tune_s=result.elapsed_s,
            recorded_samples_per_s=result.recipe.measured.samples_per_s,
            side_by_side_samples_per_s=run.mean(tuned_role(seed)),
            grid_best_samples_per_s=grid_rate,
            verified_samples_per_s=run.verified_median(seed),
        )
        for seed, result in run.tunings
    ]


def _ceiling_share(result: TuneResult, rate: float) -> float | None:
    ceilings = result.ceilings
    bound = ceilings.bound_for(result.config) if ceilings is not None else None
    return None if not bound else round(rate / bound, 3)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _record(
    run: WorkloadRun, seed: int, result: TuneResult, fig: TuningFigures, worst_in: list[str]
) -> TuningRecord:
    m, counts = result.recipe.measured, trial_counts(result.trials)
    rate = fig.side_by_side_samples_per_s
    return TuningRecord(
        seed=seed,
        tuned=result.config.label(),
        params=result.config.as_dict(),
        tune_s=shown_seconds(result.elapsed_s),
        stop=result.stop_reason,
        trials=counts["trials"],
        remeasured=counts["remeasured"],
        pruned=counts["pruned"],
        noise_pct=m.noise_pct,
        recorded_samples_per_s=round(fig.recorded_samples_per_s, 2),
        recorded_error_pct=m.samples_per_s_error_pct,
        side_by_side_samples_per_s=round(rate, 2),
        tuned_vs_grid=round(fig.tuned_vs_grid, 4),
        speedup_vs_defaults=round(rate / run.mean(DEFAULTS), 3),
        speedup_vs_heuristic=round(rate / run.mean(HEURISTIC), 3),
        verified_samples_per_s=_round(fig.verified_samples_per_s, 2),
        verified_rounds=[round(r, 2) for r in run.verified.get(seed, [])],
        recorded_vs_verified=_round(fig.recorded_vs_verified),
        device_ceiling_samples_per_s=m.device_ceiling_samples_per_s,
        loader_ceiling_samples_per_s=m.loader_ceiling_samples_per_s,
        ceiling_share=_ceiling_share(result, rate),
        worst_in=worst_in,
        tied_with=m.tied_with,
        tie_pairs=m.tie_pairs,
        ties_resolved=m.ties_resolved,
    )


def bench_row(run: WorkloadRun) -> BenchRow:
    grid_best = run.grid_best()
    grid_rate = run.series[grid_best].mean
    figs = figures(run)
    worst = worst_of(figs)
    results = dict(run.tunings)
    records = {
        f.seed: _record(run, f.seed, results[f.seed], f, worst.roles().get(f.seed, []))
        for f in figs
    }
    low = worst.tuned_vs_grid  # the headline tuning: the one furthest below the grid's best
    chosen, record = results[low.seed], records[low.seed]
    slowest = worst.tune_s
    tune_s = shown_seconds(slowest.tune_s)
    off = worst.recorded_vs_verified
    several = len(figs) > 1
    targets = evaluate(
        tuned_vs_grid=low.tuned_vs_grid,
        tune_s=tune_s,
        budget_s=run.budget_s,
        grid_s=run.grid.elapsed_s,
        grid_exhaustive=run.grid_exhaustive,
        tuned_workers=[f.config.num_workers for f in figs],
        usable_cpus=run.usable_cpus,
        compute_bound=run.bench.compute_bound,
        stability_diff=worst.spread if several else None,
        beyond_cores_faster=beyond_cores_faster(
            [(p.config.num_workers, p.samples_per_s) for p in run.grid.ranked()], run.usable_cpus
        ),
        recorded_vs_verified=None if off is None else off.recorded_vs_verified,
    )
    bw = run.bench
    return BenchRow(
        key=bw.key,
        spec=bw.spec,
        what=bw.what,
        held_out=bw.held_out,
        compute_bound=bw.compute_bound,
        usable_cpus=run.usable_cpus,
        tuned=low.config.label(),
        tuned_seed=low.seed,
        tuned_workers=low.config.num_workers,
        grid_best=grid_best.label(),
        grid_best_workers=grid_best.num_workers,
        tuned_samples_per_s=round(low.side_by_side_samples_per_s, 2),
        grid_best_samples_per_s=round(grid_rate, 2),
        tuned_vs_grid=round(low.tuned_vs_grid, 4),
        tune_s=tune_s,
        tune_s_seed=slowest.seed,
        budget_s=run.budget_s,
        grid_s=round(run.grid.elapsed_s, 2),
        grid_points=len(run.grid.points),
        grid_covers=run.grid_covers,
        grid_rejected=sum(1 for p in run.grid.points if p.status == TrialStatus.REJECTED),
        tune_share_of_grid=round(slowest.tune_s / run.grid.elapsed_s, 4),
        defaults_samples_per_s=round(run.mean(DEFAULTS), 2),
        heuristic_samples_per_s=round(run.mean(HEURISTIC), 2),
        speedup_vs_defaults=record.speedup_vs_defaults,
        speedup_vs_heuristic=record.speedup_vs_heuristic,
        device_ceiling_samples_per_s=record.device_ceiling_samples_per_s,
        loader_ceiling_samples_per_s=record.loader_ceiling_samples_per_s,
        ceiling_share=record.ceiling_share,
        tuner_trials=record.trials,
        tuner_remeasured=record.remeasured,
        tuner_pruned=record.pruned,
        tuner_noise_pct=record.noise_pct,
        tuner_stop=chosen.stop_reason,
        recorded_samples_per_s=None if off is None else round(off.recorded_samples_per_s, 2),
        verified_samples_per_s=_round(None if off is None else off.verified_samples_per_s, 2),
        recorded_vs_verified=_round(None if off is None else off.recorded_vs_verified),
        recorded_vs_verified_seed=None if off is None else off.seed,
        stability_diff=round(worst.spread, 4) if several else None,
        tunings=[records[f.seed] for f in figs],
        side_by_side=_side_by_side(run),
        targets=targets,
    )


def default_roles(
    tunings: list[tuple[int, TuneResult]], grid: GridRun, heuristic: LoaderConfig
) -> dict[str, LoaderConfig]:
    ranked = grid.ranked()
    roles = {tuned_role(seed): result.config for seed, result in tunings}
    roles.update({GRID_BEST: ranked[0].config, DEFAULTS: PYTORCH_DEFAULTS, HEURISTIC: heuristic})
    if len(ranked) > 1:
        roles[GRID_SECOND] = ranked[1].config
    return roles
