"""What the commands share: one-line errors with exit code 2, and the console."""

from __future__ import annotations

import functools
from typing import Any, Callable

import typer
from rich.console import Console

from autotune.errors import AutotuneError

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
