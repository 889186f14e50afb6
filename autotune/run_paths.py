"""Where run folders go (results/runs/DATE-SLUG), with nothing heavy imported: `autotune run`
lists them before and after the script it starts, and starts it without importing torch or optuna
in its own process."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from autotune.errors import OptionsError

ONLINE_PREFIX = "online-"  # an online loader's run folder slug: online-NAME


def cache_root() -> Path:
    """autotune's folder in the user's cache: $AUTOTUNE_CACHE, else the platform's user cache
    ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on
    Windows), plus /autotune."""
    if base := os.environ.get("AUTOTUNE_CACHE"):
        return Path(base) / "autotune"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "autotune"
    if sys.platform == "win32" and (local := os.environ.get("LOCALAPPDATA")):
        return Path(local) / "autotune" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autotune"


def check_writable(run_dir: Path, shown: Path, flag: str) -> None:
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / f".write-test-{os.getpid()}"  # array tasks may probe one folder at once
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise OptionsError(f"{flag} {shown} is not writable ({exc.strerror or exc})") from None


RUNS = "runs"  # the run folders' parent under a results directory


def run_dirs(results_dir: Path, slug_prefix: str) -> set[Path]:
    """The run folders under `results_dir` whose workload slug starts with `slug_prefix`."""
    runs = Path(results_dir) / RUNS
    return set(runs.glob(f"*-{slug_prefix}*")) if runs.is_dir() else set()


def new_run_dir(results_dir: Path, workload_name: str | None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", workload_name or "workload").strip("-") or "workload"
    base = Path(results_dir) / RUNS / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
    check_writable(base.parent, Path(results_dir), "--results-dir")
    run_dir, n = base, 1
    while True:  # claimed by creating it: array tasks starting in the same second get one each
        try:
            run_dir.mkdir()
            return run_dir
        except FileExistsError:
            n += 1
            run_dir = base.with_name(f"{base.name}-{n}")
        except OSError as exc:
            raise OptionsError(
                f"--results-dir {results_dir} is not writable ({exc.strerror or exc})"
            ) from None
