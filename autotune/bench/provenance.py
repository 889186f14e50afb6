"""Which code a committed result was measured on: the git commit of the tree autotune runs from,
so that a figure read months later says what it is a figure of."""

from __future__ import annotations

import subprocess
from pathlib import Path

_TREE = Path(__file__).resolve().parents[2]


def git_commit(tree: Path = _TREE) -> str | None:
    """The short commit of `tree`, '+dirty' where tracked files differ from it (the measured code
    is then not that commit's); None outside a git checkout (an installed package)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit
