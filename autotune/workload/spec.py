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


def _importable_name(path: Path) -> str | None:
    """The name under which a child process finds `path` by a plain import (its folder first on
    sys.path, as `python path` runs it); None where that name means another module already
    imported or earlier on the path (a file named like the standard library's `random.py`)."""
    name = path.stem
    if not name.isidentifier():
        return None
    loaded = sys.modules.get(name)
    if loaded is not None:
        return name if Path(getattr(loaded, "__file__", "") or "").resolve() == path else None
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin and Path(spec.origin).resolve() == path:
        return name
    if added:
        sys.path.remove(folder)
    return None


def _module_from_file(path: Path) -> ModuleType:
    """The file imported as a module. DataLoader workers started by spawn or forkserver unpickle
    the dataset by reference (module and class name) in a fresh interpreter, which imports that
    module by name; it inherits sys.path (multiprocessing's preparation data), so a file imported
    by its own name from its folder on sys.path is found there. Only where that name is taken is
    the file loaded under a private name, which fork's workers (a copy of this process) still
    find."""
    if not path.is_file():
        raise WorkloadError(f"workload file {path} does not exist")
    path = path.resolve()
    name = _importable_name(path)
    if name is not None and name in sys.modules:
        return sys.modules[name]
    name = name or f"autotune_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does: classes pickle by reference to it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise WorkloadError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    return module


def _module_by_name(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise WorkloadError(
            f"module {name!r} not found ({exc.name} is missing); "
            f"use a built-in ({', '.join(BUILTINS)}), FILE.py:factory or"
            " package.module:factory"
        ) from None
    except Exception as exc:
        raise WorkloadError(f"importing {name} failed: {type(exc).__name__}: {exc}") from None


def load_workload(spec: str | None, options: WorkloadOptions | None = None) -> Workload:
    options = options or WorkloadOptions()
    spec = spec or DEFAULT_WORKLOAD
    head, sep, arg = spec.partition(":")
    if head in BUILTINS:
        return BUILTINS[head](arg or None, options)
    if not sep or not arg:
        raise WorkloadError(
            f"unknown workload {spec!r}: use a built-in ({', '.join(BUILTINS)}),"
            " FILE.py:factory or package.module:factory"
        )
    module_ref, _, factory_name = spec.rpartition(":")
    module = (
        _module_from_file(Path(module_ref))
        if module_ref.endswith(".py")
        else _module_by_name(module_ref)
    )
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
