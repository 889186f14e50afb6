"""`autotune verify RUN_DIR_OR_RECIPE [WORKLOAD]`: is the recipe's figure the rate its configuration
sustains? Re-measured in long alternating windows against PyTorch's defaults."""

from __future__ import annotations

from pathlib import Path

import torch
import typer

from autotune.cli.common import DEBUG_OPTION, console, one_line_errors
from autotune.space.config import LoaderConfig
from autotune.verify.run import verify as run_verify
from autotune.verify.steady import DEFAULT_ROUNDS, DEFAULT_SECONDS, SETTLE_S, SteadyResult
from autotune.workload.base import Workload


@one_line_errors
def verify(
    source: Path = typer.Argument(
        ...,
        metavar="RUN_DIR_OR_RECIPE",
        help="a run folder written by `autotune tune`, or a recipe file",
    ),
    workload: str | None = typer.Argument(
        None, help="workload spec, as `autotune tune` takes it; default: the one the recipe records"
    ),
    seconds: float = typer.Option(
        DEFAULT_SECONDS, "--seconds", help="each timed window, in seconds"
    ),
    rounds: int = typer.Option(
        DEFAULT_ROUNDS, "--rounds", help="alternating rounds (tuned, defaults, tuned, ...)"
    ),
    settle: float = typer.Option(
        SETTLE_S,
        "--settle",
        help="least settle time before each window, in"
        " seconds (and at least 3 x num_workers x prefetch_factor batches)",
    ),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    out: Path | None = typer.Option(
        None, "--out", help="folder for verify.json and verify.md (default: beside the recipe)"
    ),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Re-measure a recipe's configuration and PyTorch's defaults in a plain training loop,
    alternating long windows, and compare with the rate the recipe recorded."""

    def on_start(work: Workload, dev: torch.device, configs: list[LoaderConfig]) -> None:
        labels = " and ".join(c.label() for c in configs)
        console.print(
            f"[bold]autotune verify[/]: {source}: {work.name} on {dev}, {labels}"
            f" alternating, {rounds} rounds of {seconds:g} s windows ...",
            highlight=False,
            soft_wrap=True,
        )

    def on_result(r: int, result: SteadyResult) -> None:
        console.print(
            f"  round {r + 1}/{rounds}: {result.config.label():<24}"
            f" {result.samples_per_s:9.1f} samples/s ({result.window_s:.1f} s window,"
            f" settled {result.settle_s:.1f} s)",
            highlight=False,
            soft_wrap=True,
        )

    result = run_verify(
        source,
        workload,
        seconds=seconds,
        rounds=rounds,
        device=device,
        settle_s=settle,
        out_dir=out,
        on_result=on_result,
        on_start=on_start,
    )
    for line in result.summary_lines():
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for name in ("json", "md"):
        if name in result.files:
            console.print(
                f"{'verify:' if name == 'json' else '       '} {result.files[name]}",
                highlight=False,
                soft_wrap=True,
            )
