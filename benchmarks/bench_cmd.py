"""`autotune bench`: prove the tuner against an exhaustive grid, defaults and the usual heuristic;
`autotune bench --accuracy`: burst rates against steady rates, configuration by configuration;
`autotune bench --online`: autotune.DataLoader against defaults and the grid's best, trained
alike."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar

import typer
from pydantic import ValidationError

from autotune.cli.common import console, one_line_errors, option_error
from autotune.errors import OptionsError
from autotune.key_values import key_values
from autotune.search.options import BurstOptions
from autotune.space.config import PYTORCH_DEFAULTS
from benchmarks.accuracy import parse_config, run_accuracy
from benchmarks.online_run import run_online
from benchmarks.options import AccuracyOptions, BenchOptions, OnlineBenchOptions
from benchmarks.render import accuracy_table, headline
from benchmarks.render_online import online_table
from benchmarks.run import run_bench
from benchmarks.workloads import check_keys
from benchmarks.write import check_writable, write_accuracy, write_online, write_report

FLAGS = {
    "ranks": "--ranks",
    "budget_s": "--budget",
    "out_dir": "--out",
    "steady_seconds": "--steady-seconds",
    "steady_rounds": "--steady-rounds",
    "settle_s": "--settle",
    "steps": "--steps",
    "grid_from": "--grid-from",
}


def _log(line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def _split(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


@one_line_errors
def bench(
    quick: bool = typer.Option(
        False, "--quick", help="two workloads, smaller grid (a few minutes)"
    ),
    workloads: str | None = typer.Option(
        None, "--workloads", help="comma-separated bench workload keys"
    ),
    budget: float = typer.Option(60.0, "--budget", help="the tuner's wall-clock budget in seconds"),
    rounds: int | None = typer.Option(
        None,
        "--rounds",
        help="side-by-side rounds (default 3); with --accuracy, bursts and steady"
        " windows per configuration (default 3, --quick 2); with --online, rounds of the three"
        " trainings (default 1)",
    ),
    tunings: int = typer.Option(
        3, "--tunings", help="tunings per workload (seeds 0, 1, ...); the worst is reported"
    ),
    steady_seconds: float | None = typer.Option(
        None,
        "--steady-seconds",
        help="each steady window: recorded vs verified (default 10 s,"
        " --quick 5 s) or, with --accuracy, the steady measurement (default 20 s, --quick 5 s)",
    ),
    steady_rounds: int | None = typer.Option(
        None, "--steady-rounds", help="steady windows per tuning, right after it (default 2)"
    ),
    full_grid: bool = typer.Option(
        False, "--full-grid", help="grid over every valid point (no knob held off for any workload)"
    ),
    accuracy: bool = typer.Option(
        False,
        "--accuracy",
        help="instead: the accuracy table, burst rates against steady rates -> accuracy.md/.json",
    ),
    configs: str | None = typer.Option(
        None,
        "--configs",
        help="with --accuracy: comma-separated configurations (default 'w0,w2 pf2,w8 pf4,w8 pf8')",
    ),
    burst: str | None = typer.Option(
        None,
        "--burst",
        help="with --accuracy: the bursts' settings other than a trial's, as"
        " key=value,... (min_steps, min_seconds, max_seconds, warmup_steps, time_limit_s), e.g."
        " 'max_seconds=10,warmup_steps=100'",
    ),
    full_window: bool = typer.Option(
        False,
        "--full-window",
        help="with --accuracy: bursts as the record runs them, the window running to its longest",
    ),
    online: bool = typer.Option(
        False,
        "--online",
        help="instead: train each workload with PyTorch's"
        " defaults, autotune.DataLoader and the grid's best -> online.md/.json",
    ),
    steps: int = typer.Option(
        3000,
        "--steps",
        help="with --online: training steps per way (at least 3000 for a committed run)",
    ),
    grid_from: Path = typer.Option(
        Path("results/bench/bench.json"),
        "--grid-from",
        help="with --online: a full bench's JSON, each workload's grid best",
    ),
    no_defaults: bool = typer.Option(
        False,
        "--no-defaults",
        help="with --online: leave out (a),"
        " PyTorch's defaults (no target reads it; (b)/(a) is n/a)",
    ),
    no_grid: bool = typer.Option(
        False,
        "--no-grid",
        help="with --online: fail for a workload --grid-from lacks instead of running its grid",
    ),
    start: str = typer.Option(
        "w0",
        "--start",
        help="with --online: the script's own configuration, as the tables write it ('w4 pf2'):"
        " (a) trains it and (b) starts from it (default PyTorch's defaults, w0)",
    ),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    max_workers: int | None = typer.Option(None, "--max-workers", help="cap on num_workers"),
    ranks: int = typer.Option(
        1,
        "--ranks",
        help="with --online: train each way as this many DDP"
        " ranks on this node -> online-ranksN.md/.json",
    ),
    out: Path = typer.Option(
        Path("results/bench"),
        "--out",
        help="folder for bench.md and bench.json (accuracy.md and .json, online.md and .json)",
    ),
) -> None:
    """Tune each bench workload 3 times, run the exhaustive grid, measure all side by side and
    verify the recipes' rates; report the worst tuning. With --accuracy: burst against steady rates.
    With --online: autotune.DataLoader against PyTorch's defaults and the grid's best."""
    command = "autotune " + shlex.join(sys.argv[1:])
    keys = _split(workloads)
    if keys:
        check_keys(keys)  # before anything is created or measured
    if accuracy and online:
        raise OptionsError("--accuracy and --online are two different runs: pass one")
    if ranks != 1 and not online:
        raise OptionsError(
            f"--ranks {ranks} applies to --online only: add --online, or drop --ranks"
        )
    if (burst is not None or full_window) and not accuracy:
        raise OptionsError("--burst and --full-window apply to --accuracy only: add --accuracy")
    if accuracy:
        # The keys are checked here, the values by BurstOptions.
        settings = key_values(
            burst, BurstOptions.model_fields, "--burst: bad setting", OptionsError
        )
        _accuracy(
            quick,
            keys,
            configs,
            rounds,
            steady_seconds,
            settings,
            full_window,
            device,
            out,
            command,
        )
        return
    if online:
        _online(
            keys,
            steps,
            rounds,
            grid_from,
            no_grid,
            no_defaults,
            start,
            device,
            max_workers,
            ranks,
            out,
            command,
        )
        return
    opts = _options(
        BenchOptions,
        quick=quick,
        workloads=keys,
        budget_s=budget,
        **({"rounds": rounds} if rounds is not None else {}),
        tunings=tunings,
        steady_seconds=steady_seconds,
        steady_rounds=steady_rounds,
        full_grid=full_grid,
        device=device,
        max_workers=max_workers,
        out_dir=out,
    )
    _run(opts, run_bench, write_report, headline, "bench", command)


Opts = TypeVar("Opts", BenchOptions, AccuracyOptions, OnlineBenchOptions)


def _options(model: type[Opts], **values: Any) -> Opts:
    try:
        return model(**values)
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None


def _run(
    opts: Any,
    run: Callable[..., Any],
    write: Callable[..., tuple[Path, Path]],
    table: Callable[[Any], str],
    name: str,
    command: str,
) -> None:
    """Run, write the Markdown and JSON, print the table and where the files are."""
    check_writable(opts.out_dir)  # fail now, not after the measuring
    report = run(opts, _log, command)
    md, js = write(report, opts.out_dir, opts.stem)
    console.print(table(report), highlight=False, markup=False, soft_wrap=True)
    console.print(f"{name}: {md}\n{' ' * (len(name) + 2)}{js}")


def _accuracy(
    quick: bool,
    keys: list[str] | None,
    configs: str | None,
    rounds: int | None,
    steady_seconds: float | None,
    burst: dict[str, str],
    full_window: bool,
    device: str,
    out: Path,
    command: str,
) -> None:
    opts = _options(
        AccuracyOptions,
        quick=quick,
        workloads=keys,
        configs=_split(configs),
        rounds=rounds,
        steady_seconds=steady_seconds,
        burst=burst,
        full_window=full_window,
        device=device,
        out_dir=out,
    )
    for label in opts.configs or ():
        parse_config(label)  # a typo fails now, not after an hour
    _run(opts, run_accuracy, write_accuracy, accuracy_table, "accuracy", command)


def _online(
    keys: list[str] | None,
    steps: int,
    rounds: int | None,
    grid_from: Path,
    no_grid: bool,
    no_defaults: bool,
    start: str,
    device: str,
    max_workers: int | None,
    ranks: int,
    out: Path,
    command: str,
) -> None:
    if parse_config(start) != PYTORCH_DEFAULTS and ranks > 1:  # a typo fails now, not later
        raise OptionsError(f"--start {start!r} applies to single-process runs: drop it, or --ranks")
    opts = _options(
        OnlineBenchOptions,
        workloads=keys,
        steps=steps,
        **({"rounds": rounds} if rounds is not None else {}),
        grid_from=grid_from,
        run_grid=not no_grid,
        defaults=not no_defaults,
        start=start,
        device=device,
        max_workers=max_workers,
        ranks=ranks,
        out_dir=out,
    )
    _run(opts, run_online, write_online, online_table, "online", command)
