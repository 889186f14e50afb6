"""`autotune bench --accuracy`: does a burst measure the rate a configuration sustains?

For each workload and configuration, `rounds` pairs: one burst exactly as the tuner runs a trial
(autotune.burst.runner.run_burst with BurstOptions().settings(); other settings, or the record's
full window, where asked) and one steady measurement in a plain training loop
(autotune.verify.steady: settle, then a 20 s window), the burst first in odd rounds and second in
even ones. A machine that drifts between minutes then weighs on both sides alike: on an H200 the
same configuration's plain loop moved 15% within three minutes, and with the burst always first
the pairs read 0.91 in one call and 1.10 in the next (results/gpu/2026-11-26-h200-evening.md). The
ratio of the burst median to the steady median should be within ±5%, for deep buffers of
oversubscribed workers (8 workers, prefetch 4-8, on 2 CPUs) as for PyTorch's defaults.

The held-out workload is not measured unless named: measuring it here would show how the tuner
does on it before a full bench run does.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

from autotune import environment
from autotune.burst.runner import BurstSettings, run_burst
from autotune.errors import AutotuneError, OptionsError
from autotune.space.config import LoaderConfig, label_values
from autotune.space.cpus import usable_cpus
from autotune.verify.steady import measure_steady
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from benchmarks.alternate import round_order
from benchmarks.model import AccuracyReport, AccuracyRow
from benchmarks.options import AccuracyOptions
from benchmarks.provenance import git_commit
from benchmarks.targets import burst_within_steady
from benchmarks.workloads import BenchWorkload, select

Log = Callable[[str], None]

# Small and deep: PyTorch's defaults, a worker per core, and 8 workers with deep prefetch on 2 CPUs.
DEFAULT_CONFIGS = ("w0", "w2 pf2", "w8 pf4", "w8 pf8")
QUICK_CONFIGS = ("w0", "w2 pf2", "w8 pf8")


def parse_config(label: str) -> LoaderConfig:
    """A configuration written as the tables write it: 'w8 pf4 persist', 'w0', 'w2 pf2 cl'."""
    try:
        values = label_values(label)
    except ValueError as exc:
        raise OptionsError(
            f"bad configuration {label!r} ({exc}): write it as the tables do, e.g."
            " 'w0', 'w2 pf2', 'w8 pf4 persist'"
        ) from None
    if "num_workers" not in values:
        raise OptionsError(f"bad configuration {label!r}: it needs a worker count, e.g. 'w2 pf2'")
    config = LoaderConfig(**values)
    problems = config.problems(cuda=True)
    if problems:
        raise OptionsError(f"bad configuration {label!r}: {'; '.join(problems)}")
    return config


def accuracy_workloads(keys: list[str] | None, quick: bool) -> list[BenchWorkload]:
    if keys:
        return select(keys, quick)
    return [w for w in select(None, quick) if not w.held_out]


def measure_config(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    settings: BurstSettings,
    *,
    rounds: int,
    seconds: float,
    settle_s: float,
    cpus: int,
    log: Log,
    key: str,
) -> tuple[list[float], list[float]]:
    """(burst rates, steady rates), `rounds` of each: a burst and a steady measurement per round,
    the burst first in rounds 1, 3, ... and second in rounds 2, 4, ..."""
    bursts: list[float] = []
    steady: list[float] = []
    measure = {
        "burst": lambda: (
            run_burst(workload, config, device, settings, usable_cpus=cpus).samples_per_s
        ),
        "steady": lambda: (
            measure_steady(workload, config, device, seconds, settle_s=settle_s).samples_per_s
        ),
    }
    for r in range(rounds):
        order = round_order(("burst", "steady"), r)
        rates = {name: measure[name]() for name in order}
        bursts.append(rates["burst"])
        steady.append(rates["steady"])
        log(
            f"[{key}] {config.label()} round {r + 1}/{rounds} ({order[0]} first): burst"
            f" {rates['burst']:.1f}, steady {rates['steady']:.1f} samples/s"
        )
    return bursts, steady


def accuracy_row(
    bw: BenchWorkload,
    config: LoaderConfig,
    bursts: list[float],
    steady: list[float],
    error: str | None = None,
) -> AccuracyRow:
    burst_median = statistics.median(bursts) if bursts else None
    steady_median = statistics.median(steady) if steady else None
    ratio = (
        burst_median / steady_median
        if error is None and burst_median is not None and steady_median
        else None
    )
    return AccuracyRow(
        workload=bw.key,
        spec=bw.spec,
        config=config.label(),
        params=config.as_dict(),
        burst_samples_per_s=[round(x, 2) for x in bursts],
        burst_median=None if burst_median is None else round(burst_median, 2),
        steady_samples_per_s=[round(x, 2) for x in steady],
        steady_median=None if steady_median is None else round(steady_median, 2),
        ratio=None if ratio is None else round(ratio, 4),
        within=False if error is not None else burst_within_steady(ratio),
        error=error,
    )


def run_accuracy(opts: AccuracyOptions, log: Log, command: str) -> AccuracyReport:
    t0 = time.perf_counter()
    configs = [
        parse_config(c)
        for c in (opts.configs or (QUICK_CONFIGS if opts.quick else DEFAULT_CONFIGS))
    ]
    settings = opts.burst.settings(full_window=opts.full_window)
    cpus = usable_cpus().count
    rows: list[AccuracyRow] = []
    for bw in accuracy_workloads(opts.workloads, opts.quick):
        workload = load_workload(bw.spec, WorkloadOptions(device=opts.device))
        device = workload.device or resolve_device(opts.device)
        for config in configs:
            cuda_only = [p for p in config.problems(cuda=device.type == "cuda") if "CUDA" in p]
            if cuda_only:
                raise OptionsError(f"configuration {config.label()}: {'; '.join(cuda_only)}")
            try:
                bursts, steady = measure_config(
                    workload,
                    config,
                    device,
                    settings,
                    rounds=opts.measure_rounds,
                    seconds=opts.seconds,
                    settle_s=opts.settle_s,
                    cpus=cpus,
                    log=log,
                    key=bw.key,
                )
            except AutotuneError:
                raise
            except Exception as exc:  # one configuration failing (shared memory, ...) fails alone
                log(f"[{bw.key}] {config.label()} failed: {type(exc).__name__}: {exc}")
                rows.append(accuracy_row(bw, config, [], [], f"{type(exc).__name__}: {exc}"))
                continue
            rows.append(accuracy_row(bw, config, bursts, steady))
    return AccuracyReport(
        command=command,
        commit=git_commit(),
        quick=opts.quick,
        environment=environment.collect(resolve_device(opts.device)),
        burst={**opts.burst.model_dump(), "full_window": opts.full_window},
        as_trials=opts.as_trials,
        order_alternates=True,
        steady_seconds=opts.seconds,
        settle_s=opts.settle_s,
        rounds=opts.measure_rounds,
        total_s=round(time.perf_counter() - t0, 1),
        rows=rows,
    )
