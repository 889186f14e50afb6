"""One bench run: per workload, the tuner (twice), the grid, and a side-by-side re-measurement of
the tuned configuration, the grid's two fastest, PyTorch defaults and the usual heuristic."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

from autotune import environment
from autotune.bench.compare import Series, side_by_side
from autotune.bench.grid import QUICK_OFF, GridRun, coverage, grid_configs, run_grid
from autotune.bench.model import BenchReport, BenchRow, MeasuredConfig
from autotune.bench.options import BenchOptions
from autotune.bench.targets import beyond_cores_faster, evaluate
from autotune.bench.workloads import BenchWorkload, select
from autotune.errors import WorkloadError
from autotune.search.options import BurstOptions
from autotune.search.trial import trial_counts
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.tuner import TuneResult, batch_mib, build_space, probe_batch, tune
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

Log = Callable[[str], None]


def heuristic(space: SearchSpace, cpus: int) -> LoaderConfig:
    """The common advice: a worker per CPU, pinned memory (only meaningful with CUDA), torch's
    default prefetch spelled out, so that it is the same point as the grid's."""
    return LoaderConfig(num_workers=min(cpus, space.max_workers), pin_memory=space.cuda,
                        prefetch_factor=2)


def _tune(workload: Workload, opts: BenchOptions, seed: int, ram_budget_mib: float) -> TuneResult:
    return tune(workload, budget_s=opts.budget_s, seed=seed, device=opts.device,
                max_workers=opts.max_workers, ram_budget_mib=ram_budget_mib, results_dir=None)


def _roles(configs: dict[str, LoaderConfig]) -> dict[LoaderConfig, list[str]]:
    roles: dict[LoaderConfig, list[str]] = {}
    for role, config in configs.items():
        roles.setdefault(config, []).append(role)
    return roles


def bench_workload(bw: BenchWorkload, opts: BenchOptions, log: Log) -> BenchRow:
    cpus = usable_cpus().count
    workload = load_workload(bw.spec, WorkloadOptions(device=opts.device))
    ram_budget = default_ram_budget_mib()  # one budget for the tuner and the grid alike
    log(f"[{bw.key}] tuning (budget {opts.budget_s:.0f}s) ...")
    tuned = _tune(workload, opts, seed=0, ram_budget_mib=ram_budget)
    log(f"[{bw.key}] tuned: {tuned.config.label()} in {tuned.elapsed_s:.1f}s"
        f" ({tuned.stop_reason})")
    second = _tune(workload, opts, seed=1, ram_budget_mib=ram_budget) if opts.stability else None
    if second is not None:
        log(f"[{bw.key}] second tuning (seed 1): {second.config.label()} in {second.elapsed_s:.1f}s")

    batch = probe_batch(workload)
    space = build_space(batch, tuned.device, opts.max_workers)
    guard = MemoryGuard(ram_budget, batch_mib(batch))
    del batch
    off = tuple(dict.fromkeys(bw.grid_off + (QUICK_OFF if opts.quick else ())))
    configs = grid_configs(space, off)
    log(f"[{bw.key}] grid: {len(configs)} points ({coverage(space, off)}) ...")
    grid = run_grid(workload, tuned.device, configs, BurstOptions().settings(), usable_cpus=cpus,
                    guard=guard)
    ranked = grid.ranked()
    if not ranked:
        raise WorkloadError(f"bench workload {bw.key}: no grid point could be measured")
    log(f"[{bw.key}] grid done in {grid.elapsed_s:.0f}s; best {ranked[0].config.label()}")

    roles = {"tuned": tuned.config, "grid best": ranked[0].config,
             "defaults": PYTORCH_DEFAULTS, "heuristic": heuristic(space, cpus)}
    if len(ranked) > 1:
        roles["grid second"] = ranked[1].config
    if second is not None:
        roles["tuned (seed 1)"] = second.config
    by_config = _roles(roles)
    log(f"[{bw.key}] side by side: {len(by_config)} configurations x {opts.rounds} rounds ...")
    series = side_by_side(workload, tuned.device, list(by_config), opts.side_by_side_settings(),
                          opts.rounds, usable_cpus=cpus)
    return _row(bw, opts, cpus, tuned, second, grid, coverage(space, off), not off, series, roles,
                by_config)


def _row(bw: BenchWorkload, opts: BenchOptions, cpus: int, tuned: TuneResult,
         second: TuneResult | None, grid: GridRun, grid_covers: str, exhaustive: bool, series: dict[LoaderConfig, Series],
         roles: dict[str, LoaderConfig], by_config: dict[LoaderConfig, list[str]]) -> BenchRow:
    grid_top = [roles["grid best"]] + ([roles["grid second"]] if "grid second" in roles else [])
    grid_best = max(grid_top, key=lambda c: series[c].mean)  # the grid's pick, re-measured
    t, g = series[tuned.config], series[grid_best]
    m = tuned.recipe.measured
    counts = trial_counts(tuned.trials)
    bound = tuned.ceilings.bound_at(tuned.config.num_workers)
    stability = None
    if second is not None:
        a, b = t.mean, series[second.config].mean
        stability = abs(a - b) / max(a, b)
    figures = dict(
        tuned_vs_grid=t.mean / g.mean, tune_s=tuned.elapsed_s, budget_s=opts.budget_s,
        grid_s=grid.elapsed_s, grid_exhaustive=exhaustive, tuned_workers=tuned.config.num_workers,
        usable_cpus=cpus, compute_bound=bw.compute_bound, stability_diff=stability,
        beyond_cores_faster=beyond_cores_faster(
            [(p.config.num_workers, p.samples_per_s) for p in grid.ranked()], cpus))
    return BenchRow(
        key=bw.key, spec=bw.spec, what=bw.what, held_out=bw.held_out,
        compute_bound=bw.compute_bound, usable_cpus=cpus,
        tuned=tuned.config.label(), tuned_workers=tuned.config.num_workers,
        grid_best=grid_best.label(), grid_best_workers=grid_best.num_workers,
        tuned_samples_per_s=round(t.mean, 2), grid_best_samples_per_s=round(g.mean, 2),
        tuned_vs_grid=round(t.mean / g.mean, 4), tune_s=round(tuned.elapsed_s, 2),
        budget_s=opts.budget_s, grid_s=round(grid.elapsed_s, 2), grid_points=len(grid.points),
        grid_covers=grid_covers,
        grid_rejected=sum(1 for p in grid.points if p.status == "rejected"),
        tune_share_of_grid=round(tuned.elapsed_s / grid.elapsed_s, 4),
        defaults_samples_per_s=round(series[PYTORCH_DEFAULTS].mean, 2),
        heuristic_samples_per_s=round(series[roles["heuristic"]].mean, 2),
        speedup_vs_defaults=round(t.mean / series[PYTORCH_DEFAULTS].mean, 3),
        speedup_vs_heuristic=round(t.mean / series[roles["heuristic"]].mean, 3),
        device_ceiling_samples_per_s=round(tuned.ceilings.device_samples_per_s, 2),
        loader_ceiling_samples_per_s=m.loader_ceiling_samples_per_s,
        ceiling_share=None if not bound else round(t.mean / bound, 3),
        tuner_trials=counts["trials"], tuner_remeasured=counts["remeasured"],
        tuner_pruned=counts["pruned"], tuner_noise_pct=m.noise_pct,
        tuner_stop=tuned.stop_reason,
        second_tuned=None if second is None else second.config.label(),
        stability_diff=None if stability is None else round(stability, 4),
        side_by_side=[MeasuredConfig(roles=by_config[c], label=c.label(), params=c.as_dict(),
                                     samples_per_s=[round(r, 2) for r in s.rates],
                                     mean=round(s.mean, 2), cv=round(s.cv, 4),
                                     peak_pss_mib=round(s.peak_pss_mib, 1))
                      for c, s in series.items()],
        targets=evaluate(**figures))


def run_bench(opts: BenchOptions, log: Log, command: str) -> BenchReport:
    t0 = time.perf_counter()
    rows = []
    for bw in select(opts.workloads, opts.quick):
        rows.append(bench_workload(bw, opts, log))
    return BenchReport(command=command, quick=opts.quick,
                       environment=environment.collect(resolve_device(opts.device)),
                       tuner_budget_s=opts.budget_s, burst=BurstOptions().model_dump(),
                       side_by_side_burst=asdict(opts.side_by_side_settings()), rounds=opts.rounds,
                       total_s=round(time.perf_counter() - t0, 1), rows=rows)
