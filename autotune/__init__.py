"""autotune: find the DataLoader settings that keep your accelerator fed, by measuring them.

The names below are imported on first use (PEP 562): `autotune run` starts the user's script
without first importing torch in its own process (seconds on a short run)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from autotune.version import __version__ as __version__

__all__ = [
    "AutotuneError",
    "DataLoader",
    "DeviceLoader",
    "Recipe",
    "RecipeError",
    "TuneResult",
    "TuningInterrupted",
    "Workload",
    "WorkloadError",
    "load_recipe",
    "tune",
    "verify",
]

_WHERE = {
    "tune": "autotune.api",
    "AutotuneError": "autotune.errors",
    "RecipeError": "autotune.errors",
    "WorkloadError": "autotune.errors",
    "DataLoader": "autotune.online.loader",
    "Recipe": "autotune.recipe.model",
    "load_recipe": "autotune.recipe.model",
    "TuningInterrupted": "autotune.search.interrupt",
    "TuneResult": "autotune.search.result",
    "DeviceLoader": "autotune.transfer.device_loader",
    "Workload": "autotune.workload.base",
}

if TYPE_CHECKING:
    from autotune import verify
    from autotune.api import tune
    from autotune.errors import AutotuneError, RecipeError, WorkloadError
    from autotune.online.loader import DataLoader
    from autotune.recipe.model import Recipe, load_recipe
    from autotune.search.interrupt import TuningInterrupted
    from autotune.search.result import TuneResult
    from autotune.transfer.device_loader import DeviceLoader
    from autotune.workload.base import Workload


def __getattr__(name: str) -> Any:
    if name == "verify":  # callable: autotune.verify(run_dir_or_recipe, ...)
        value: Any = importlib.import_module("autotune.verify")
    elif name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
    else:
        raise AttributeError(f"module 'autotune' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
