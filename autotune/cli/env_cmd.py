"""`autotune env`: what this machine offers the input pipeline."""

from __future__ import annotations

from rich.table import Table

from autotune import environment
from autotune.cli.common import console, one_line_errors


@one_line_errors
def env() -> None:
    """Show usable CPUs (and why), GPUs seen by NVML, torch/CUDA versions and Slurm variables."""
    table = Table(show_header=False, box=None)
    for key, value in environment.describe().items():
        table.add_row(f"[bold]{key}[/]", str(value))
    console.print(table)
