"""The typer application; each command lives in its own module and is registered here."""

from __future__ import annotations

import typer

from autotune.cli import (
    env_cmd,
    memory_cmd,
    report_cmd,
    run_cmd,
    show_cmd,
    slurm_cmd,
    tune_cmd,
    verify_cmd,
)
from autotune.cli.lab import register
from autotune.made_by import version_line

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Tune a PyTorch input pipeline by measuring short training bursts.",
)


def _version(show: bool) -> None:
    if show:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="print the version (and the git commit in a checkout) and exit",
    ),
) -> None:
    """Tune a PyTorch input pipeline by measuring short training bursts."""


app.command("tune")(tune_cmd.tune)
app.command("show")(show_cmd.show)
app.command("env")(env_cmd.env)
app.command("slurm")(slurm_cmd.slurm)
app.command("report")(report_cmd.report)
register(app, "overhead_cmd", "overhead")  # from benchmarks/, in a clone only
register(app, "bench_cmd", "bench")
app.command("verify")(verify_cmd.verify)
app.command("run", context_settings=run_cmd.RUN_CONTEXT)(run_cmd.run)
app.command("memory")(memory_cmd.memory)


def main() -> None:
    app()
