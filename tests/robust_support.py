"""Shared by the robustness tests: tiny bursts, the hostile module's path, processes still
alive, and running the real `autotune` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
from conftest import children

from autotune.search.options import BurstOptions

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = Path(__file__).with_name("hostile_workloads.py")

# Bursts of a few tenths of a second; a hang is declared after 3 s.
TINY_BURST = BurstOptions(
    min_steps=2, min_seconds=0.1, max_seconds=0.3, warmup_steps=1, time_limit_s=3.0
)


def spec(factory: str) -> str:
    """A workload spec for the CLI: FILE.py:factory of the hostile module."""
    return f"{HOSTILE}:{factory}"


def child_pids() -> set[int]:
    """This process's children now; other tests may leave long-lived ones (multiprocessing's
    resource tracker), so tests compare against what was there before them."""
    return {p.pid for p in children()}


def alive(pids: set[int]) -> list[int]:
    """Those of `pids` still running (zombies count as gone: they hold no memory)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def cli_env() -> dict[str, str]:
    """This checkout first on the path (the venv's editable install points elsewhere)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"  # keep table rows and messages on one line each
    return env


def autotune_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "autotune", *args]


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        autotune_command(*args),
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
