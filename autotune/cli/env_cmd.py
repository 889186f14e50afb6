"""`autotune env`: what this machine offers the input pipeline."""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table

from autotune import environment
from autotune.cli.common import console, one_line_errors


@one_line_errors
def env(ranks_per_node: Optional[int] = typer.Option(
        None, "--ranks-per-node", min=1,
        help="ranks that will share this node (default: LOCAL_WORLD_SIZE or Slurm's layout)")) -> None:
    """Show usable CPUs (and why), GPUs seen by NVML, torch/CUDA versions and Slurm variables."""
    table = Table(show_header=False, box=None)
    for key, value in environment.describe(ranks_per_node).items():
        table.add_row(f"[bold]{key}[/]", str(value))
    console.print(table)
