"""Which measured configuration becomes the recipe."""

from __future__ import annotations

from autotune.search.trial import Trial


def pick_best(trials: list[Trial]) -> Trial | None:
    measured = [t for t in trials if t.ok]
    return max(measured, key=lambda t: t.samples_per_s) if measured else None
