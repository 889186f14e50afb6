"""The Python API page, written from the public names' signatures and docstrings, so that it reads
as plain Markdown in the repository view and cannot drift from the code."""

from __future__ import annotations

import inspect
import re
from typing import Any

import autotune

FUNCTIONS = ("tune", "verify", "load_recipe")
CLASSES = ("Workload", "TuneResult", "Recipe", "DeviceLoader", "DataLoader")
ERRORS = ("AutotuneError", "RecipeError", "WorkloadError", "TuningInterrupted")


def _plain(text: str) -> str:
    """Annotations unquoted (postponed annotations are strings), paths and function defaults
    as the same text on every platform and every run (a function's repr carries its address)."""
    text = re.sub(r": '([^']*)'", r": \1", text)
    text = re.sub(r"\b(?:Posix|Windows)Path\(", "Path(", text)
    return re.sub(r"<function (\w+) at 0x[0-9a-f]+>", r"\1", text)


def _signature(name: str, obj: Any) -> str:
    """One parameter a line, as a formatter would write a long signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    params, previous = [], None
    for param in sig.parameters.values():
        if param.kind is param.KEYWORD_ONLY and previous not in (
            param.KEYWORD_ONLY,
            param.VAR_POSITIONAL,
        ):
            params.append("*")
        params.append(_plain(str(param)))
        previous = param.kind
    ret = sig.return_annotation
    arrow = (
        ""
        if ret is sig.empty
        else " -> " + _plain(f": '{ret}'" if isinstance(ret, str) else f": {ret}")[2:]
    )
    if not params:
        return f"{name}(){arrow}"
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){arrow}"


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


def _entry(name: str, obj: Any, kind: str) -> list[str]:
    lines = [f"## `autotune.{name}`", "", "```python", f"{kind}{_signature(name, obj)}", "```", ""]
    if doc := _doc(obj):
        lines += ["```text", doc, "```", ""]
    return lines


def _methods(cls: type) -> list[str]:
    lines: list[str] = []
    for name, member in cls.__dict__.items():
        if name.startswith("_") or not callable(getattr(cls, name, None)):
            continue
        func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        if not inspect.isfunction(func) or not func.__doc__:
            continue
        lines += [
            f"### `{cls.__name__}.{name}`",
            "",
            "```python",
            f"{_signature(name, func)}",
            "```",
            "",
            "```text",
            _doc(func),
            "```",
            "",
        ]
    return lines


def page() -> str:
    from autotune.verify.run import verify  # autotune.verify is a callable module

    lines = [
        "# Python API",
        "",
        "Written from the code's signatures and docstrings by `python docs/gen/pages.py`."
        " Everything here is importable from the top-level package: `import autotune`.",
        "",
    ]
    for name in FUNCTIONS:
        obj = verify if name == "verify" else getattr(autotune, name)
        lines += _entry(name, obj, "def ")
    for name in CLASSES:
        cls = getattr(autotune, name)
        lines += _entry(name, cls, "class ") + _methods(cls)
    lines += ["# Errors", ""]
    for name in ERRORS:
        lines += _entry(name, getattr(autotune, name), "class ")
    return "\n".join(lines).rstrip() + "\n"
