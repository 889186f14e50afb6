"""Which autotune made something: its version, and the git commit where it runs from a checkout."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from autotune.version import __version__

# The folder holding the `autotune` package: a checkout's root, or site-packages once installed.
_TREE = Path(__file__).resolve().parents[1]


def git_commit(tree: Path = _TREE) -> str | None:
    """The short commit of `tree`, '+dirty' where tracked files differ from it (the code is then
    not that commit's); None outside a git checkout. Only a checkout's own root counts: an
    installed package's site-packages may sit inside some other repository (a project's .venv)."""
    if not (tree / ".git").exists():
        return None

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit


@functools.lru_cache(maxsize=1)
def this_commit() -> str | None:
    """git_commit of the running autotune, asked once per process (a recipe is written from
    inside a training step by the online loader)."""
    return git_commit()


def version_line() -> str:
    commit = this_commit()
    return f"autotune {__version__} ({f'commit {commit}' if commit else 'installed package'})"
