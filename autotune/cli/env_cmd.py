"""`autotune env`: what this machine offers the input pipeline."""

from __future__ import annotations

import typer
from rich.table import Table

from autotune import environment
from autotune.cli.common import DEBUG_OPTION, console, err_console, one_line_errors


@one_line_errors
def env(
    ranks_per_node: int | None = typer.Option(
        None,
        "--ranks-per-node",
        min=1,
        help="ranks that will share this node (default: LOCAL_WORLD_SIZE or Slurm's layout)",
    ),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Show usable CPUs (and why), GPUs seen by NVML, /dev/shm, torch/CUDA versions and Slurm
    variables; warn about what will hold a DataLoader back."""
    table = Table(show_header=False, box=None)
    for key, value in environment.describe(ranks_per_node).items():
        table.add_row(f"[bold]{key}[/]", str(value))
    console.print(table)
    for warning in environment.warnings():
        err_console.print(f"[bold yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
