"""Resolve a CLI workload spec: a built-in name, `path/to/file.py:factory` or
`pkg.module:factory`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from autotune.errors import WorkloadError
from autotune.workload.base import Workload
from autotune.workload.builtin import BUILTINS
from autotune.workload.options import WorkloadOptions

DEFAULT_WORKLOAD = "demo"


def _module_from_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise WorkloadError(f"workload file {path} does not exist")
    name = f"autotune_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered so DataLoader workers (and pickling) can find classes defined in the file.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise WorkloadError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    return module


def _module_by_name(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise WorkloadError(f"module {name!r} not found ({exc.name} is missing); "
                            f"use a built-in ({', '.join(BUILTINS)}), FILE.py:factory or"
                            " package.module:factory") from None
    except Exception as exc:
        raise WorkloadError(f"importing {name} failed: {type(exc).__name__}: {exc}") from None


def load_workload(spec: str | None, options: WorkloadOptions | None = None) -> Workload:
    options = options or WorkloadOptions()
    spec = spec or DEFAULT_WORKLOAD
    head, sep, arg = spec.partition(":")
    if head in BUILTINS:
        return BUILTINS[head](arg or None, options)
    if not sep or not arg:
        raise WorkloadError(f"unknown workload {spec!r}: use a built-in ({', '.join(BUILTINS)}),"
                            " FILE.py:factory or package.module:factory")
    module_ref, _, factory_name = spec.rpartition(":")
    module = (_module_from_file(Path(module_ref)) if module_ref.endswith(".py")
              else _module_by_name(module_ref))
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise WorkloadError(f"{module_ref} has no callable {factory_name!r}")
    try:
        workload = factory()
    except WorkloadError as exc:
        raise WorkloadError(f"{spec}: {exc}") from None
    except Exception as exc:
        raise WorkloadError(f"{spec}: the factory raised {type(exc).__name__}: {exc}") from None
    if not isinstance(workload, Workload):
        raise WorkloadError(f"{spec} returned {type(workload).__name__}, not an autotune.Workload")
    return workload
