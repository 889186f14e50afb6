"""`autotune run [OPTIONS] -- python train.py ARGS...` (or `autotune run [OPTIONS] train.py
ARGS...`): an unmodified training script, its loaders tuned online. Everything from the script's
path (or after `--`) is the script's, untouched.

The command runs in a child process whose Python starts with autotune/online/boot first on
PYTHONPATH: its sitecustomize replaces torch's DataLoader with autotune.DataLoader once torch is
imported, in that process and in every Python process it starts (launchers, DDP ranks). The
online options travel as JSON in $AUTOTUNE_ONLINE. Each loader writes a run folder (recipe and
report) when its exploring ends, and again at exit; once the command has ended, each is printed
here, one table per loader. SIGINT and SIGTERM reach the command, which writes what it measured
and ends; the exit code is the command's own (128+N where a signal N ended it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import typer

import autotune.online.boot as boot
from autotune.cli import common
from autotune.cli.common import DEBUG_OPTION, one_line_errors
from autotune.errors import OptionsError
from autotune.online.options import ENV_VAR, Notices, OnlineOptions, resolve
from autotune.run_paths import ONLINE_PREFIX, RUNS, check_writable, run_dirs

# The script's own options follow the command: typer must pass them through, not parse them, and
# stop reading its own options at the script's path (`run train.py --debug` is the script's).
RUN_CONTEXT = {
    "allow_extra_args": True,
    "ignore_unknown_options": True,
    "allow_interspersed_args": False,
}


def run_app() -> typer.Typer:
    """`autotune run` alone (cli/entry.py): the same command, without the rest of the CLI."""
    app = typer.Typer(add_completion=False)
    app.command("run", context_settings=RUN_CONTEXT)(run)
    return app


def command_line(args: list[str]) -> list[str]:
    """`train.py ARGS` runs with this Python; anything else (`python train.py`, `torchrun ...`)
    runs as given."""
    if not args:
        raise OptionsError(
            "autotune run needs a command: autotune run -- python train.py ARGS"
            " (or autotune run train.py ARGS)"
        )
    if args[0].endswith(".py"):
        if not Path(args[0]).is_file():
            raise OptionsError(f"autotune run: no script {args[0]}")
        return [sys.executable, *args]
    return args


def child_environment(
    options: OnlineOptions, environ: dict[str, str] | None = None
) -> dict[str, str]:
    env = dict(os.environ if environ is None else environ)
    boot_dir = str(Path(boot.__file__).parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (boot_dir, env.get("PYTHONPATH")) if p)
    if options.notices is Notices.ALL:  # the final lines are the reports printed at the end
        options = options.model_copy(update={"notices": Notices.SETTLED})
    env[ENV_VAR] = json.dumps(options.model_dump(mode="json", exclude_defaults=True))
    return env


def new_run_folders(results_dir: Path, before: set[Path]) -> list[Path]:
    """The online run folders written since `before` was listed, oldest first."""
    now = run_dirs(results_dir, ONLINE_PREFIX)
    return sorted((p for p in now - before if (p / "recipe.json").is_file()), key=lambda p: p.name)


@one_line_errors
def run(
    ctx: typer.Context,
    results: Path = typer.Option(
        Path("results"), "--results-dir", help="where each tuned loader writes its run folder"
    ),
    fix: list[str] | None = typer.Option(
        None,
        "--fix",
        help="a knob to keep as the script"
        " passes it (repeatable): num_workers, prefetch_factor,"
        " persistent_workers, pin_memory",
    ),
    max_explore_share: float | None = typer.Option(
        None,
        "--max-explore-share",
        help="the most time exploring may lose against the best so"
        " far, as a share of the first epoch's time (of 600 steps' where epochs are shorter)",
    ),
    epochs: int | None = typer.Option(
        None,
        "--epochs",
        help="the epochs the script trains for, where known: exploring then"
        " stops once the steps left cannot repay it (short runs)",
    ),
    total_steps: int | None = typer.Option(
        None,
        "--total-steps",
        help="the training steps the script runs (its max_steps), instead of --epochs",
    ),
    memory: str | None = typer.Option(
        None,
        "--memory",
        metavar="FOLDER|off",
        help="where the runs of a workload on this machine"
        " are remembered, so that the next run starts from them; `off`: not remembered (default:"
        " $AUTOTUNE_MEMORY, else ~/.cache/autotune/memory)",
    ),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Run a training script with every torch DataLoader tuned online (no change to the script)."""
    # Unset flags are left out, so that what $AUTOTUNE_ONLINE already says is kept.
    given = {
        "results_dir": results,
        "fixed": tuple(fix) if fix else None,
        "max_explore_share": max_explore_share,
        "epochs": epochs,
        "total_steps": total_steps,
        "memory": memory,
    }
    options = resolve({k: v for k, v in given.items() if v is not None})
    command = command_line(list(ctx.args))
    check_writable(results / RUNS, results, "--results-dir")  # before the script, not after it
    before = run_dirs(results, ONLINE_PREFIX)
    # The handlers are in place before the script starts: a signal that came before them would
    # end autotune run, leaving the script (in a group of its own) without it.
    with forwarded_signals() as started:
        try:
            child = subprocess.Popen(
                command,
                env=child_environment(options),
                preexec_fn=None if _from_terminal() else _own_group,
            )
        except FileNotFoundError:
            raise OptionsError(f"autotune run: command not found: {command[0]}") from None
        started(child)
        console = common.console  # rich is imported while the script starts, not after it ends
        code = child.wait()
    folders = new_run_folders(results, before)
    for folder in folders:
        console.rule(f"autotune: {folder.name}")
        console.print(
            (folder / "report.md").read_text().rstrip(),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        console.print(f"recipe: {folder / 'recipe.json'}", highlight=False, soft_wrap=True)
    if not folders:
        console.print(
            "autotune run: no loader was tuned (no torch DataLoader was iterated, or"
            " tuning was off)",
            highlight=False,
            soft_wrap=True,
        )
    raise typer.Exit(exit_code(code))


def exit_code(returncode: int) -> int:
    """The child's exit code as a shell reports it: 128+N where signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


@contextmanager
def forwarded_signals() -> Iterator[Callable[[subprocess.Popen], None]]:
    """SIGINT and SIGTERM sent to `autotune run` go to the command, which writes its results and
    ends; this process waits for it. Each reaches the command once: a second KeyboardInterrupt
    could cut its exit short. In a terminal's foreground the command shares this process group,
    so Ctrl-C (sent to the group) already reached it and is not forwarded; elsewhere the command
    has a group of its own (`_own_group`), so a signal to this group reaches it only from here.
    Yields `started(child)`; a signal that comes before the command has started is sent to it
    then."""
    child: list[subprocess.Popen] = []
    pending: list[int] = []
    shared_group = [False]

    def send(signum: int) -> None:
        try:
            child[0].send_signal(signum)
        except ProcessLookupError:
            pass

    def forward(signum: int, _frame: object) -> None:
        if not child:
            pending.append(signum)
        elif not (signum == signal.SIGINT and shared_group[0] and _from_terminal()):
            send(signum)

    def started(process: subprocess.Popen) -> None:
        shared_group[0] = _same_group(process.pid)
        child.append(process)
        while pending:
            send(pending.pop(0))

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield started
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _own_group() -> None:
    """In the child, before the command starts: a process group of its own, so that a signal sent
    to autotune run's group (`kill -INT -PGID`, a supervisor) is not delivered twice. Since a
    signal to the group, SIGKILL included, no longer reaches it, it gets SIGTERM if autotune run
    dies (Linux), rather than training on as an orphan."""
    parent = os.getppid()
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM))
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # autotune run died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)


def _same_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == os.getpgrp()
    except OSError:
        return True


def _from_terminal() -> bool:
    """This process group is a terminal's foreground group: its SIGINT went to the command too."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False
