"""What the commands share: one-line errors with exit code 2, --debug, and the console."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Mapping

import typer
from pydantic import ValidationError

from autotune.errors import AutotuneError, OptionsError

if TYPE_CHECKING:
    from rich.console import Console

_CONSOLES = {"console": False, "err_console": True}  # name -> on stderr


@functools.cache
def _console(stderr: bool) -> Console:
    """rich's console, made at its first use: `autotune run` starts the user's script before it
    imports rich, which it needs only for what it prints at the end."""
    from rich.console import Console

    return Console(stderr=stderr)


def __getattr__(name: str) -> Console:
    """`console` and `err_console` (`_console`)."""
    if name not in _CONSOLES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _console(_CONSOLES[name])


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
            from rich.markup import escape

            err = _console(stderr=True)
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            if exc.detail:
                err.print(exc.detail.rstrip(), markup=False, highlight=False, soft_wrap=True)
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
    console = _console(stderr=False)
    console.print(f"bottleneck: [bold]{bottleneck}[/]: {reason}", highlight=False)
    for text in recommendations:
        console.print(f"  - {text}", highlight=False)
