"""`autotune bench`: prove the tuner against an exhaustive grid, defaults and the usual heuristic;
`autotune bench --accuracy`: burst rates against steady rates, configuration by configuration."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError

from autotune.bench.accuracy import parse_config, run_accuracy
from autotune.bench.options import AccuracyOptions, BenchOptions
from autotune.bench.render import accuracy_table, headline
from autotune.bench.run import run_bench
from autotune.bench.workloads import check_keys
from autotune.bench.write import check_writable, write_accuracy, write_report
from autotune.cli.common import console, one_line_errors, option_error

FLAGS = {"budget_s": "--budget", "out_dir": "--out", "steady_seconds": "--steady-seconds",
         "steady_rounds": "--steady-rounds", "settle_s": "--settle"}


def _log(line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def _split(text: Optional[str]) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


@one_line_errors
def bench(
    quick: bool = typer.Option(False, "--quick", help="two workloads, smaller grid (a few minutes)"),
    workloads: Optional[str] = typer.Option(None, "--workloads", help="comma-separated bench workload keys"),
    budget: float = typer.Option(60.0, "--budget", help="the tuner's wall-clock budget in seconds"),
    rounds: Optional[int] = typer.Option(
        None, "--rounds", help="side-by-side rounds (default 3); with --accuracy, bursts and steady"
        " windows per configuration (default 3, --quick 2)"),
    tunings: int = typer.Option(3, "--tunings", help="tunings per workload (seeds 0, 1, ...); the"
                                " worst is reported"),
    steady_seconds: Optional[float] = typer.Option(
        None, "--steady-seconds", help="each steady window: recorded vs verified (default 10 s,"
        " --quick 5 s) or, with --accuracy, the steady measurement (default 20 s, --quick 5 s)"),
    steady_rounds: Optional[int] = typer.Option(
        None, "--steady-rounds", help="steady windows per tuned configuration (default 2)"),
    full_grid: bool = typer.Option(False, "--full-grid", help="grid over every valid point (no knob"
                                   " held off for any workload)"),
    accuracy: bool = typer.Option(False, "--accuracy", help="instead: the accuracy table, burst"
                                  " rates against steady rates -> accuracy.md/.json"),
    configs: Optional[str] = typer.Option(
        None, "--configs", help="with --accuracy: comma-separated configurations (default"
        " 'w0,w2 pf2,w8 pf4,w8 pf8')"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    max_workers: Optional[int] = typer.Option(None, "--max-workers", help="cap on num_workers"),
    out: Path = typer.Option(Path("results/bench"), "--out", help="folder for bench.md and bench.json"
                             " (accuracy.md and accuracy.json)"),
) -> None:
    """Tune each bench workload 3 times, run the exhaustive grid, measure all side by side and
    verify the recipes' rates; report the worst tuning. With --accuracy: burst against steady rates."""
    command = "autotune " + shlex.join(sys.argv[1:])
    keys = _split(workloads)
    if keys:
        check_keys(keys)  # before anything is created or measured
    if accuracy:
        _accuracy(quick, keys, configs, rounds, steady_seconds, device, out, command)
        return
    try:
        opts = BenchOptions(quick=quick, workloads=keys, budget_s=budget,
                            **({"rounds": rounds} if rounds is not None else {}), tunings=tunings,
                            steady_seconds=steady_seconds, steady_rounds=steady_rounds,
                            full_grid=full_grid, device=device, max_workers=max_workers, out_dir=out)
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None
    check_writable(opts.out_dir)
    report = run_bench(opts, _log, command)
    md, js = write_report(report, opts.out_dir, opts.stem)
    console.print(headline(report), highlight=False, markup=False, soft_wrap=True)
    console.print(f"bench: {md}\n       {js}")


def _accuracy(quick: bool, keys: list[str] | None, configs: Optional[str], rounds: Optional[int],
              steady_seconds: Optional[float], device: str, out: Path, command: str) -> None:
    try:
        opts = AccuracyOptions(quick=quick, workloads=keys, configs=_split(configs), rounds=rounds,
                               steady_seconds=steady_seconds, device=device, out_dir=out)
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None
    for label in opts.configs or ():
        parse_config(label)  # a typo fails now, not after an hour
    check_writable(opts.out_dir)
    report = run_accuracy(opts, _log, command)
    md, js = write_accuracy(report, opts.out_dir, opts.stem)
    console.print(accuracy_table(report), highlight=False, markup=False, soft_wrap=True)
    console.print(f"accuracy: {md}\n          {js}")
