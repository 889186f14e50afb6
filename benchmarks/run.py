"""One bench run: per workload, the tuner (three times, seeds 0, 1, 2), each tuning followed at
once by a steady measurement of its configuration (autotune.verify.steady, not the burst runner)
to check the rate its recipe recorded, then the grid and a side-by-side re-measurement of the
tuned configurations, the grid's two fastest, PyTorch defaults and the usual heuristic. Verified
minutes later instead, after the other tunings and the grid, the shared machine's drift read as
the recipe's error (tokenizer +24%, photos -9%)."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

from autotune import environment
from autotune.api import tune
from autotune.search.guard import default_ram_budget_mib
from autotune.search.options import BurstOptions
from autotune.search.result import TuneResult
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace
from autotune.verify.steady import SteadyResult, alternate
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from benchmarks.compare import side_by_side
from benchmarks.grid import QUICK_OFF, search_grid
from benchmarks.model import BenchReport, BenchRow
from benchmarks.options import BenchOptions
from benchmarks.provenance import git_commit
from benchmarks.row import WorkloadRun, bench_row, default_roles
from benchmarks.workloads import BenchWorkload, select

Log = Callable[[str], None]


def heuristic(space: SearchSpace, cpus: int) -> LoaderConfig:
    """The common advice: a worker per CPU, pinned memory (only meaningful with CUDA), torch's
    default prefetch spelled out, so that it is the same point as the grid's."""
    return LoaderConfig(
        num_workers=min(cpus, space.max_workers), pin_memory=space.cuda, prefetch_factor=2
    )


def _tune(workload: Workload, opts: BenchOptions, seed: int, ram_budget_mib: float) -> TuneResult:
    return tune(
        workload,
        budget=opts.budget_s,
        seed=seed,
        device=opts.device,
        max_workers=opts.max_workers,
        ram_budget=ram_budget_mib,
        results_dir=None,
    )


def held_off(bw: BenchWorkload, opts: BenchOptions, device_type: str) -> tuple[str, ...]:
    """The knobs the grid holds off: the workload's own (unless --full-grid), and --quick's."""
    own = () if opts.full_grid else bw.held_off(device_type)
    return tuple(dict.fromkeys(own + (QUICK_OFF if opts.quick else ())))


def verify_tuning(
    workload: Workload, seed: int, result: TuneResult, opts: BenchOptions, log: Log, key: str
) -> list[float]:
    """The tuned configuration measured steadily in a plain training loop, right after its tuning,
    as a user runs `autotune verify` after `autotune tune`: its rate per window."""

    def on_result(r: int, steady: SteadyResult) -> None:
        log(
            f"[{key}] steady {r + 1}/{opts.verify_rounds} (seed {seed}):"
            f" {steady.config.label()} {steady.samples_per_s:.1f} samples/s"
        )

    try:
        rates = alternate(
            workload,
            result.device,
            [result.config],
            opts.verify_seconds,
            opts.verify_rounds,
            settle_s=opts.settle_s,
            on_result=on_result,
        )
    except Exception as exc:  # the bench's other figures stand; this column shows n/a
        log(f"[{key}] steady measurement failed: {type(exc).__name__}: {exc}")
        return []
    return rates[result.config]


def bench_workload(bw: BenchWorkload, opts: BenchOptions, log: Log) -> BenchRow:
    cpus = usable_cpus().count
    workload = load_workload(bw.spec, WorkloadOptions(device=opts.device))
    ram_budget = default_ram_budget_mib()  # one budget for the tuner and the grid alike
    tunings: list[tuple[int, TuneResult]] = []
    verified: dict[int, list[float]] = {}
    for seed in opts.seeds:
        log(f"[{bw.key}] tuning, seed {seed} (budget {opts.budget_s:.0f}s) ...")
        result = _tune(workload, opts, seed=seed, ram_budget_mib=ram_budget)
        log(
            f"[{bw.key}] tuned (seed {seed}): {result.config.label()} in {result.elapsed_s:.1f}s"
            f" ({result.stop_reason}); recorded"
            f" {result.recipe.measured.samples_per_s:.1f} samples/s"
        )
        tunings.append((seed, result))
        verified[seed] = verify_tuning(workload, seed, result, opts, log, bw.key)
    device = tunings[0][1].device

    search = search_grid(
        bw.key,
        workload,
        device,
        held_off(bw, opts, device.type),
        max_workers=opts.max_workers,
        ram_budget_mib=ram_budget,
        usable_cpus=cpus,
        log=log,
        workers=bw.grid_workers,
    )
    grid = search.run

    roles = default_roles(tunings, grid, heuristic(search.space, cpus))
    distinct = list(dict.fromkeys(roles.values()))
    log(f"[{bw.key}] side by side: {len(distinct)} configurations x {opts.rounds} rounds ...")
    series = side_by_side(
        workload, device, distinct, opts.side_by_side_settings(), opts.rounds, usable_cpus=cpus
    )
    return bench_row(
        WorkloadRun(
            bw,
            opts.budget_s,
            cpus,
            tunings,
            grid,
            search.covers,
            search.exhaustive,
            roles,
            series,
            verified,
        )
    )


def run_bench(opts: BenchOptions, log: Log, command: str) -> BenchReport:
    t0 = time.perf_counter()
    rows = [bench_workload(bw, opts, log) for bw in select(opts.workloads, opts.quick)]
    return BenchReport(
        command=command,
        commit=git_commit(),
        quick=opts.quick,
        environment=environment.collect(resolve_device(opts.device)),
        tuner_budget_s=opts.budget_s,
        burst=BurstOptions().model_dump(),
        side_by_side_burst=asdict(opts.side_by_side_settings()),
        rounds=opts.rounds,
        tunings=opts.tunings,
        verify={
            "seconds": opts.verify_seconds,
            "rounds": opts.verify_rounds,
            "settle_s": opts.settle_s,
        },
        total_s=round(time.perf_counter() - t0, 1),
        rows=rows,
    )
