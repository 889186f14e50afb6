"""A bench a tuner cannot be lucky on: each workload is tuned several times (seeds 0, 1, 2) and the
headline reports the WORST tuning on each measure, not the mean. Each measure picks its own worst
tuning (the one with the lowest tuned / grid-best need not be the slowest one); ties go to the
lower seed, so the choice is reproducible."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from autotune.space.config import LoaderConfig


@dataclass(frozen=True)
class TuningFigures:
    """What one tuning scored, from the side-by-side run and the steady verification."""

    seed: int
    config: LoaderConfig
    tune_s: float  # the tuner's whole wall time
    recorded_samples_per_s: float  # what its recipe says
    side_by_side_samples_per_s: float  # its configuration's mean in the side-by-side run
    grid_best_samples_per_s: float  # the grid's best, in the same side-by-side run
    verified_samples_per_s: float | None = None  # the steady measurement's median

    @property
    def tuned_vs_grid(self) -> float:
        return self.side_by_side_samples_per_s / self.grid_best_samples_per_s

    @property
    def recorded_vs_verified(self) -> float | None:
        """(recorded - verified) / verified: positive when the recipe overstated its rate."""
        if self.verified_samples_per_s is None or self.verified_samples_per_s <= 0:
            return None
        return (
            self.recorded_samples_per_s - self.verified_samples_per_s
        ) / self.verified_samples_per_s


@dataclass(frozen=True)
class Worst:
    tuned_vs_grid: TuningFigures  # the lowest tuned / grid best
    tune_s: TuningFigures  # the longest tuning
    recorded_vs_verified: (
        TuningFigures | None
    )  # the largest |recorded - verified|; None: unverified
    spread: float  # (fastest - slowest) / fastest of the tunings' side-by-side means

    def roles(self) -> dict[int, list[str]]:
        """Seed -> the measures on which that tuning is the worst."""
        out: dict[int, list[str]] = {}
        for name in ("tuned_vs_grid", "tune_s", "recorded_vs_verified"):
            figures = getattr(self, name)
            if figures is not None:
                out.setdefault(figures.seed, []).append(name)
        return out


def _worst(
    tunings: Sequence[TuningFigures], badness: Callable[[TuningFigures], float]
) -> TuningFigures:
    # max() keeps the first of equals: sorted by seed, the lower seed wins a tie.
    return max(sorted(tunings, key=lambda t: t.seed), key=badness)


def spread(rates: Sequence[float]) -> float:
    """(max - min) / max: how far apart repeated tunings' choices landed (0: all the same)."""
    top = max(rates)
    return (top - min(rates)) / top if top > 0 else 0.0


def worst_of(tunings: Sequence[TuningFigures]) -> Worst:
    if not tunings:
        raise ValueError("no tuning to judge")
    verified = [t for t in tunings if t.recorded_vs_verified is not None]
    return Worst(
        tuned_vs_grid=_worst(tunings, lambda t: -t.tuned_vs_grid),
        tune_s=_worst(tunings, lambda t: t.tune_s),
        recorded_vs_verified=(
            _worst(verified, lambda t: abs(t.recorded_vs_verified or 0.0)) if verified else None
        ),
        spread=spread([t.side_by_side_samples_per_s for t in tunings]),
    )
