"""One bench run: per workload, the tuner (twice), the grid, and a side-by-side re-measurement of
the tuned configuration, the grid's two fastest, PyTorch defaults and the usual heuristic."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

from autotune import environment
from autotune.bench.compare import side_by_side
from autotune.bench.grid import QUICK_OFF, coverage, grid_configs, run_grid
from autotune.bench.model import BenchReport, BenchRow
from autotune.bench.options import BenchOptions
from autotune.bench.row import WorkloadRun, bench_row, default_roles
from autotune.bench.workloads import BenchWorkload, select
from autotune.errors import WorkloadError
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.options import BurstOptions
from autotune.search.tuner import TuneResult, batch_mib, build_space, probe_batch, tune
from autotune.space.config import LoaderConfig
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
    covers = coverage(space, off)
    configs = grid_configs(space, off)
    log(f"[{bw.key}] grid: {len(configs)} points ({covers}) ...")
    grid = run_grid(workload, tuned.device, configs, BurstOptions().settings(), usable_cpus=cpus,
                    guard=guard)
    if not grid.ranked():
        raise WorkloadError(f"bench workload {bw.key}: no grid point could be measured")
    log(f"[{bw.key}] grid done in {grid.elapsed_s:.0f}s; best {grid.ranked()[0].config.label()}")

    roles = default_roles(tuned, second, grid, heuristic(space, cpus))
    distinct = list(dict.fromkeys(roles.values()))
    log(f"[{bw.key}] side by side: {len(distinct)} configurations x {opts.rounds} rounds ...")
    series = side_by_side(workload, tuned.device, distinct, opts.side_by_side_settings(),
                          opts.rounds, usable_cpus=cpus)
    return bench_row(WorkloadRun(bw, opts.budget_s, cpus, tuned, second, grid, covers, not off,
                                 roles, series))


def run_bench(opts: BenchOptions, log: Log, command: str) -> BenchReport:
    t0 = time.perf_counter()
    rows = [bench_workload(bw, opts, log) for bw in select(opts.workloads, opts.quick)]
    return BenchReport(command=command, quick=opts.quick,
                       environment=environment.collect(resolve_device(opts.device)),
                       tuner_budget_s=opts.budget_s, burst=BurstOptions().model_dump(),
                       side_by_side_burst=asdict(opts.side_by_side_settings()), rounds=opts.rounds,
                       total_s=round(time.perf_counter() - t0, 1), rows=rows)
