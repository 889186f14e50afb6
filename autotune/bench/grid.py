"""The exhaustive baseline: every point of the grid measured once, as a tuner trial is measured."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

import torch

from autotune.burst.runner import BurstSettings, run_burst
from autotune.errors import AutotuneError
from autotune.search.guard import MemoryGuard
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload

# `--quick` holds the two knobs that matter least within a burst off, to stay within minutes.
QUICK_OFF = ("persistent_workers", "channels_last")


def grid_configs(space: SearchSpace, off: tuple[str, ...] = (),
                 workers: tuple[int, ...] = ()) -> list[LoaderConfig]:
    """Every valid point of the tuner's space (at the `workers` counts where given), except those
    with a knob of `off` away from its default. Each point is one burst, whose rate is over
    whole epochs (burst/epoch.py): the grid crosses epoch boundaries as training does."""
    held = [BY_NAME[name] for name in off]
    return [c for c in space.grid(list(workers) or None)
            if all(getattr(c, k.name) == k.default for k in held)]


def coverage(space: SearchSpace, off: tuple[str, ...], workers: tuple[int, ...] = ()) -> str:
    """What the grid covers, in words, for the report."""
    whole = "every valid point of the tuner's space"
    if workers:
        whole += f" at {', '.join(map(str, workers))} workers"
    held = [name for name in off if space.searches(name)]
    return whole if not held else f"{whole} with {' and '.join(held)} off"


@dataclass
class GridRun:
    points: list[TrialRecord]
    elapsed_s: float

    def ranked(self) -> list[TrialRecord]:
        """Usable points, fastest first."""
        return sorted((t for t in self.points if t.ok), key=lambda t: -t.samples_per_s)


def run_grid(workload: Workload, device: torch.device, configs: Iterable[LoaderConfig],
             settings: BurstSettings, *, usable_cpus: int, guard: MemoryGuard,
             on_point: Callable[[TrialRecord], None] | None = None) -> GridRun:
    """Each point measured once; one measured over the RAM budget is rejected, as in the tuner."""
    t0 = time.perf_counter()
    points: list[TrialRecord] = []
    for number, config in enumerate(configs):
        try:
            result = run_burst(workload, config, device, settings, usable_cpus=usable_cpus)
        except AutotuneError:
            raise
        except Exception as exc:  # as in the tuner: a failing point fails alone
            point = TrialRecord(number, config, TrialStatus.FAILED, error=f"{type(exc).__name__}: {exc}", phase=Phase.GRID)
        else:
            rejection = guard.rejection(result)
            point = TrialRecord(number, config, TrialStatus.REJECTED if rejection else TrialStatus.OK, result=result,
                          error=rejection, phase=Phase.GRID)
        points.append(point)
        if on_point is not None:
            on_point(point)
    return GridRun(points, time.perf_counter() - t0)
