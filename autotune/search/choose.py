"""Which measured configuration becomes the recipe."""

from __future__ import annotations

from autotune.search.trial import Trial
from autotune.space.config import PYTORCH_DEFAULTS


def pick_best(trials: list[Trial]) -> Trial | None:
    measured = [t for t in trials if t.ok]
    return max(measured, key=lambda t: t.samples_per_s) if measured else None


def find_baseline(trials: list[Trial]) -> Trial | None:
    """The trial of PyTorch's defaults (in a shared study, not necessarily this process's first)."""
    return next((t for t in trials if t.config == PYTORCH_DEFAULTS), trials[0] if trials else None)
