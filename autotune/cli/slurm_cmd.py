"""`autotune slurm WORKLOAD... --array N`: write (and submit) a Slurm array whose tasks share one
study."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from autotune.cli import tune_cmd
from autotune.cli.common import console, one_line_errors, option_error
from autotune.cluster.sbatch import (
    ArrayJob,
    default_study_name,
    option_flag,
    parse_sweep,
    render_script,
    submit,
)
from autotune.errors import OptionsError

# Set by the script itself for every task: not for --tune-args or --sweep.
RESERVED = ("--study", "--storage", "--budget", "--results-dir", "--out")


def _tune_command() -> Any:
    app = typer.Typer()
    app.command()(tune_cmd.tune)
    return typer.main.get_command(app)


def _check_tune_args(tune_args: list[str], sweeps: list[str]) -> None:
    """Typos fail here, at submission, not in every task of the array minutes later."""
    command = _tune_command()
    known = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
    for flag in [a.split("=", 1)[0] for a in tune_args if a.startswith("--")] + [
        option_flag(parse_sweep(s)[0]) for s in sweeps
    ]:
        if flag in RESERVED:
            raise OptionsError(
                f"{flag} is set by autotune slurm for every task: use its own option"
            )
        if flag not in known:
            raise OptionsError(f"{flag} is not an option of autotune tune")
    try:
        command.make_context("tune", ["demo", *tune_args], resilient_parsing=False)
    except Exception as exc:  # the parser's usage errors (typer vendors click: no public class)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        raise OptionsError(f"--tune-args: {message}") from None


@one_line_errors
def slurm(
    workloads: list[str] = typer.Argument(
        ...,
        help="workload spec(s) as for autotune tune; several"
        " make a grid with one study per workload",
    ),
    array: int | None = typer.Option(
        None,
        "--array",
        help="tasks in the array job (default: one"
        " per sweep point); one workload: N tasks split one search",
    ),
    sweep: list[str] = typer.Option(
        [],
        "--sweep",
        help="KEY=V1,V2,...: one point per value, KEY an"
        " option of autotune tune (e.g. batch_size=64,128,256); repeatable",
    ),
    cpus_per_task: int | None = typer.Option(None, "--cpus-per-task", help="sbatch -c"),
    gpus_per_task: int | None = typer.Option(
        None, "--gpus-per-task", help="sbatch --gpus-per-task"
    ),
    partition: str | None = typer.Option(None, "--partition", help="sbatch --partition"),
    time_limit: str | None = typer.Option(None, "--time", help="sbatch --time, e.g. 00:20:00"),
    study: str | None = typer.Option(
        None, "--study", help="study name (default: autotune-DATE-TIME)"
    ),
    storage: str | None = typer.Option(
        None,
        "--storage",
        help="shared storage: journal file on a"
        " shared filesystem (default RESULTS/studies/STUDY.journal)"
        " or an RDB URL",
    ),
    budget: float = typer.Option(60.0, "--budget", help="tuning budget of each task, in seconds"),
    tune_args: str = typer.Option(
        "",
        "--tune-args",
        help='more autotune tune options for every task, e.g. "--trials 20 --ranks-per-node 4"',
    ),
    results_dir: Path = typer.Option(
        Path("results"),
        "--results-dir",
        help="where the script, the task logs, the run folders and the default storage go",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="write and print the script; do not submit"
    ),
    wait: bool = typer.Option(
        False, "--wait", help="return when every task has ended (sbatch --wait)"
    ),
) -> None:
    """Write a Slurm array job whose tasks tune into one shared optuna study, and submit it."""
    extra = shlex.split(tune_args)
    _check_tune_args(extra, sweep)
    name = study or default_study_name()
    results = results_dir.expanduser().resolve()
    try:
        job = ArrayJob(
            workloads=workloads,
            sweeps=sweep,
            array=array,
            cpus_per_task=cpus_per_task,
            gpus_per_task=gpus_per_task,
            partition=partition,
            time=time_limit,
            study=name,
            storage=storage or str(results / "studies" / f"{name}.journal"),
            budget_s=budget,
            tune_args=extra,
            results_dir=results,
            workdir=Path.cwd(),
            python=sys.executable,
            pythonpath=os.environ.get("PYTHONPATH"),
        )
    except ValidationError as exc:
        raise option_error(exc) from None
    try:
        job.log_pattern.parent.mkdir(parents=True, exist_ok=True)
        script = job.log_pattern.parent / f"{name}.sbatch"
        script.write_text(render_script(job))
    except OSError as exc:
        raise OptionsError(
            f"cannot write the batch script under {results}: {exc.strerror or exc}"
        ) from None
    report = f"autotune report --study {shlex.quote(name)} --storage {shlex.quote(job.storage)}"
    if dry_run:
        typer.echo(script.read_text())  # verbatim: the console would wrap long lines
        typer.echo(f"script: {script} (not submitted)\nafterwards: {report}")
        return
    job_id = submit(script, wait=wait)
    state = "finished" if wait else "submitted"
    console.print(
        f"array job {job_id} {state}: {job.tasks} tasks, {job.mode}\nscript: {script}\n"
        f"logs: {job.log_pattern}\n{'now' if wait else 'when it is done'}: {report}",
        highlight=False,
    )
