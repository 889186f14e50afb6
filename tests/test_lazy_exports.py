"""The packages' lazily imported re-exports (autotune/lazy.py) resolve to what their eager
imports did, and none shares its name with a submodule: importing that submodule later would set
the package's attribute to the module, over the lazy name (as `autotune.diagnosis.diagnose`,
function and module, did)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import autotune

LAZY = sorted(
    p.parent.name
    for p in Path(autotune.__file__).parent.glob("*/__init__.py")
    if "exports(" in p.read_text()
)


@pytest.mark.parametrize("name", LAZY)
def test_every_lazy_export_resolves_and_names_no_submodule(name):
    package = importlib.import_module(f"autotune.{name}")
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    for export in package.__all__:
        assert export not in submodules, f"autotune.{name}.{export} is also a submodule"
        value = getattr(package, export)
        assert not isinstance(value, type(package)), f"autotune.{name}.{export} is a module"


def test_there_are_lazy_packages():
    assert {"burst", "search", "workload"} <= set(LAZY)


def test_the_online_path_leaves_the_offline_search_and_probes_unimported(tmp_path):
    """Every DDP rank makes its loader before its first step: the offline search, its probes and
    burst runner stay unimported (the climb imports the probes' model only where a run starts at
    num_workers=0), and so do rich, whose tables only the console's commands draw (the online
    report is Markdown), and the report's table and the diagnosis, needed when the report is
    written at the run's end."""
    code = (
        "import sys, autotune.online.loader as o;"
        " o.DataLoader(list(range(8)), batch_size=2, shuffle=True);"
        " print(sorted(m for m in sys.modules if m.startswith(('optuna', 'autotune.search.tuner',"
        " 'autotune.probe.loader', 'autotune.probe.ceilings', 'autotune.burst.runner',"
        " 'rich', 'autotune.report.table', 'autotune.diagnosis'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "AUTOTUNE_MEMORY": "off"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
