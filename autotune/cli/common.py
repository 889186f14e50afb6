"""What the commands share: one-line errors with exit code 2, and the console."""

from __future__ import annotations

import functools
from typing import Any, Callable

import typer
from pydantic import ValidationError
from rich.console import Console

from autotune.errors import AutotuneError, OptionsError

console = Console()
err_console = Console(stderr=True)

BAD_INPUT = 2


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A user's mistake is reported as one line saying what to fix, and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AutotuneError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(BAD_INPUT) from None

    return wrapper


def option_error(exc: ValidationError) -> OptionsError:
    """A rejected option as the flag the user typed and what is wrong with it."""
    err = exc.errors()[0]
    where = f"--{str(err['loc'][0]).replace('_', '-')}: " if err["loc"] else ""
    return OptionsError(f"{where}{err['msg'].removeprefix('Value error, ')}")


def print_diagnosis(bottleneck: str, reason: str, recommendations: list[str]) -> None:
    console.print(f"bottleneck: [bold]{bottleneck}[/]: {reason}", highlight=False)
    for text in recommendations:
        console.print(f"  - {text}", highlight=False)
