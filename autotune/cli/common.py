"""What the commands share: one-line errors with exit code 2, --debug, and the console."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from autotune.errors import AutotuneError, OptionsError

console = Console()
err_console = Console(stderr=True)

BAD_INPUT = 2

DEBUG_OPTION = typer.Option(
    False, "--debug", help="on an error, show autotune's Python traceback instead of one line"
)


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A user's mistake is reported as one line saying what to fix, and exit code 2 (with
    --debug, as the Python traceback). Text the user needs beyond that line (their own code's
    traceback) follows it."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AutotuneError as exc:
            if kwargs.get("debug"):
                raise
            err_console.print(
                f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
            )
            if exc.detail:
                err_console.print(
                    exc.detail.rstrip(), markup=False, highlight=False, soft_wrap=True
                )
            raise typer.Exit(BAD_INPUT) from None

    return wrapper


def option_error(exc: ValidationError, flags: Mapping[str, str] | None = None) -> OptionsError:
    """A rejected option as the flag the user typed and what is wrong with it. `flags` names the
    flags that are not --field-name (--budget for budget_s, ...)."""
    err = exc.errors()[0]
    field = str(err["loc"][0]) if err["loc"] else ""
    flag = (flags or {}).get(field, f"--{field.replace('_', '-')}")
    # A setting inside an option (--burst max_seconds=...) is named after its flag.
    inner = [str(part) for part in err["loc"][1:] if isinstance(part, str)]
    where = f"{flag}: " + "".join(f"{name}: " for name in inner) if field else ""
    return OptionsError(f"{where}{err['msg'].removeprefix('Value error, ')}")


def print_diagnosis(bottleneck: str, reason: str, recommendations: list[str]) -> None:
    console.print(f"bottleneck: [bold]{bottleneck}[/]: {reason}", highlight=False)
    for text in recommendations:
        console.print(f"  - {text}", highlight=False)
