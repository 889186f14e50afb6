"""Which code a committed result was measured on: the git commit of the tree autotune runs from,
so that a figure read months later says what it is a figure of."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

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


class Recorded(BaseModel):
    """What every bench report records about itself, first in its JSON: when, what was run, on
    which code, and (for a committed file kept as a past record) why it is not today's code."""

    model_config = ConfigDict(extra="forbid")

    created: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    command: str
    commit: str | None = None  # the code measured (git_commit); None: not recorded
    historical: str | None = None  # why a committed file is a past record, not today's code
    # Added after the run, where a target was missed: each miss, its numbers and its cause, with
    # the evidence file that shows it.
    notes: list[str] = Field(default_factory=list)
