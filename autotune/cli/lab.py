"""`autotune bench` and `autotune overhead` measure autotune itself. Their harness, the top-level
`benchmarks` package, lives in the repository beside `autotune/` and is not installed: in a clone
the commands are loaded from it, and from an installed package they fail in one line saying where
to run them. The package never imports `benchmarks` by name (tests/test_layers.py checks it); it
is loaded here by path, as a plug-in."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable

import typer

from autotune.cli.common import one_line_errors
from autotune.errors import OptionsError

LAB = "benchmarks"
# The repository root when autotune is a clone installed with `pip install -e .`.
CHECKOUT = Path(__file__).resolve().parents[2]


def register(app: typer.Typer, module: str, name: str, root: Path = CHECKOUT) -> None:
    """Register `autotune <name>`: the function `name` of `benchmarks.<module>` in the clone at
    `root`, or, where there is none, a command that fails in one line."""
    command = _load(module, name, root)
    if command is None:
        # Whatever arguments it would take in a clone are accepted, so the user reads why not.
        app.command(
            name, context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
        )(_absent(name))
    else:
        app.command(name)(command)


def _load(module: str, name: str, root: Path) -> Callable[..., Any] | None:
    package = root / LAB
    if not (package / "__init__.py").is_file():
        return None
    # Kept on the path, not only for this import: a spawned process (the DDP ranks of
    # `bench --online --ranks N`) inherits sys.path and imports its function from there.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    loaded = importlib.import_module(LAB)
    where = Path(loaded.__file__ or "").resolve().parent
    if where != package.resolve():  # another installed package of that name came first
        return None
    command: Callable[..., Any] = getattr(importlib.import_module(f"{LAB}.{module}"), name)
    return command


def _absent(name: str) -> Callable[..., Any]:
    @one_line_errors
    def command() -> None:
        raise OptionsError(
            f"`autotune {name}` measures autotune itself and runs only in a clone"
            " of its repository, where benchmarks/ sits beside autotune/:"
            " clone it, `pip install -e .` there and run the command there"
        )

    command.__doc__ = (
        "Benchmark autotune itself (in a clone of its repository only; not part of"
        " the installed package)."
    )
    return command
