"""A package's re-exported names, imported when first used (PEP 562): importing
`autotune.burst.backlog` must not import the burst runner, the workloads and their models with
it. Every Python process that `autotune run` starts imports the online loader as soon as it
imports torch, so what the online path does not use stays unimported."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def exports(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: `where` maps each exported name to its module."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    return __getattr__
