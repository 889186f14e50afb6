"""`autotune overhead [WORKLOAD]`: what autotune's own measuring costs, into results/bench/."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer

from autotune.cli.common import console, one_line_errors
from autotune.errors import OptionsError
from autotune.space.config import LoaderConfig
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from benchmarks.overhead import measure_overhead
from benchmarks.overhead_report import write_report
from benchmarks.overhead_result import Comparison

# Short steps expose per-step overhead: a 5 ms emulated step with items the workers keep up with.
DEFAULT_WORKLOAD = "sim:cpu_ms=0.2,step_ms=5,batch=32"


@one_line_errors
def overhead(
    workload: str | None = typer.Argument(None, help=f"workload spec; default {DEFAULT_WORKLOAD}"),
    num_workers: int = typer.Option(2, "--num-workers", min=0, help="DataLoader num_workers"),
    prefetch_factor: int | None = typer.Option(None, "--prefetch-factor", min=1),
    pairs: int = typer.Option(
        16, "--pairs", min=1, help="plain/instrumented segment pairs per variant"
    ),
    segment: float = typer.Option(0.5, "--segment", min=0.05, help="seconds of one timed segment"),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    results_dir: Path = typer.Option(
        Path("results"), "--results-dir", help="writes <dir>/bench/overhead.{md,json}"
    ),
) -> None:
    """Run one configuration plain and with autotune's instrumentation, alternating on one
    loader."""
    config = LoaderConfig(
        num_workers=num_workers, prefetch_factor=prefetch_factor if num_workers else None
    )
    problems = config.problems(cuda=False)
    if problems:
        raise OptionsError("; ".join(problems))
    work = load_workload(workload or DEFAULT_WORKLOAD, WorkloadOptions(device=device))
    dev = work.device or resolve_device(device)
    console.print(
        f"[bold]autotune overhead[/]: {work.name}, {config.label()}, {pairs} pairs of"
        f" {segment:g} s segments per variant"
    )

    def on_variant(name: str, comparison: Comparison) -> None:
        plain, variant = comparison.median_rates()
        console.print(
            f"  {name}: {comparison.overhead_pct:+.2f}% (plain {plain:.1f}/s,"
            f" instrumented {variant:.1f}/s)",
            highlight=False,
        )

    result = measure_overhead(
        work, config, dev, pairs=pairs, segment_s=segment, on_variant=on_variant
    )
    command = "autotune overhead " + shlex.join(sys.argv[2:])
    paths = write_report(result, results_dir / "bench", command)
    console.print(
        f"autotune instrumentation overhead: [bold]{result.overhead_pct():+.2f}%[/]"
        f" (median of {pairs} pairs)"
    )
    console.print(
        f"report: {paths['md']}\njson:   {paths['json']}", highlight=False, soft_wrap=True
    )
