"""Which code a committed result was measured on: the git commit of the tree autotune runs from,
so that a figure read months later says what it is a figure of."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

from autotune.made_by import git_commit

__all__ = ["Recorded", "git_commit"]


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
