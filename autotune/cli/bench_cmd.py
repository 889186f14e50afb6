"""`autotune bench`: prove the tuner against an exhaustive grid, defaults and the usual heuristic."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError

from autotune.bench.options import BenchOptions
from autotune.bench.render import headline
from autotune.bench.run import run_bench
from autotune.bench.workloads import check_keys
from autotune.bench.write import check_writable, write_report
from autotune.cli.common import console, one_line_errors, option_error


@one_line_errors
def bench(
    quick: bool = typer.Option(False, "--quick", help="two workloads, smaller grid (a few minutes)"),
    workloads: Optional[str] = typer.Option(None, "--workloads", help="comma-separated bench workload keys"),
    budget: float = typer.Option(60.0, "--budget", help="the tuner's wall-clock budget in seconds"),
    rounds: int = typer.Option(3, "--rounds", help="side-by-side rounds"),
    no_stability: bool = typer.Option(False, "--no-stability", help="skip the second tuning per workload"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    max_workers: Optional[int] = typer.Option(None, "--max-workers", help="cap on num_workers"),
    out: Path = typer.Option(Path("results/bench"), "--out", help="folder for bench.md and bench.json"),
) -> None:
    """Tune each bench workload, run the exhaustive grid, and measure both side by side."""
    try:
        opts = BenchOptions(quick=quick, workloads=workloads.split(",") if workloads else None,
                            budget_s=budget, rounds=rounds, stability=not no_stability,
                            device=device, max_workers=max_workers, out_dir=out)
    except ValidationError as exc:
        raise option_error(exc) from None
    if opts.workloads:
        check_keys(opts.workloads)  # before anything is created or measured
    check_writable(opts.out_dir)
    command = "autotune " + shlex.join(sys.argv[1:])
    report = run_bench(opts, lambda line: console.print(line, highlight=False, markup=False), command)
    md, js = write_report(report, opts.out_dir, opts.stem)
    console.print(headline(report), highlight=False, markup=False)
    console.print(f"bench: {md}\n       {js}")
