"""The exhaustive baseline: every point of the grid measured once, as a tuner trial is measured."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable

import torch

from autotune.burst.runner import BurstSettings, run_burst
from autotune.errors import AutotuneError, WorkloadError
from autotune.search.guard import MemoryGuard
from autotune.search.options import BurstOptions
from autotune.search.setup import batch_mib, build_space, probe_batch
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload

# `--quick` holds the two knobs that matter least within a burst off, to stay within minutes.
QUICK_OFF = ("persistent_workers", "channels_last")


def grid_configs(
    space: SearchSpace, off: tuple[str, ...] = (), workers: tuple[int, ...] = ()
) -> list[LoaderConfig]:
    """Every valid point of the tuner's space (at the `workers` counts where given), except those
    with a knob of `off` away from its default. Each point is one burst, whose rate is over
    whole epochs (burst/epoch.py): the grid crosses epoch boundaries as training does."""
    held = [BY_NAME[name] for name in off]
    return [
        c
        for c in space.grid(list(workers) or None)
        if all(getattr(c, k.name) == k.default for k in held)
    ]


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


def run_grid(
    workload: Workload,
    device: torch.device,
    configs: Iterable[LoaderConfig],
    settings: BurstSettings,
    *,
    usable_cpus: int,
    guard: MemoryGuard,
    on_point: Callable[[TrialRecord], None] | None = None,
) -> GridRun:
    """Each point measured once; one measured over the RAM budget is rejected, as in the tuner."""
    t0 = time.perf_counter()
    points: list[TrialRecord] = []
    for number, config in enumerate(configs):
        try:
            result = run_burst(workload, config, device, settings, usable_cpus=usable_cpus)
        except AutotuneError:
            raise
        except Exception as exc:  # as in the tuner: a failing point fails alone
            point = TrialRecord(
                number,
                config,
                TrialStatus.FAILED,
                error=f"{type(exc).__name__}: {exc}",
                phase=Phase.GRID,
            )
        else:
            rejection = guard.rejection(result)
            point = TrialRecord(
                number,
                config,
                TrialStatus.REJECTED if rejection else TrialStatus.OK,
                result=result,
                error=rejection,
                phase=Phase.GRID,
            )
        points.append(point)
        if on_point is not None:
            on_point(point)
    return GridRun(points, time.perf_counter() - t0)


@dataclass
class GridSearch:
    """A workload's grid run, the space it was drawn from and what it covers."""

    run: GridRun
    space: SearchSpace
    covers: str
    exhaustive: bool  # nothing of the tuner's space held off

    @property
    def best(self) -> LoaderConfig:
        return self.run.ranked()[0].config


def search_grid(
    key: str,
    workload: Workload,
    device: torch.device,
    off: tuple[str, ...],
    *,
    max_workers: int | None,
    ram_budget_mib: float,
    usable_cpus: int,
    log: Callable[[str], None],
    workers: tuple[int, ...] = (),
) -> GridSearch:
    """The tuner's space for `workload`, every point of it but those with a knob of `off` on
    (at the `workers` counts where given), each measured once with the tuner's own trial
    settings."""
    batch = probe_batch(workload)
    space = build_space(batch, device, max_workers)
    guard = MemoryGuard(ram_budget_mib, batch_mib(batch))
    del batch
    # The tuner's range may grow past its start (search/worker_range.py): the grid goes as far
    # as the workload asks, within --max-workers.
    counts = tuple(w for w in workers if max_workers is None or w <= max_workers)
    if counts:
        space = replace(space, max_workers=max(space.max_workers, *counts))
    covers = coverage(space, off, counts)
    configs = grid_configs(space, off, counts)
    # A knob that cannot apply here holds nothing off: channels_last on non-image batches.
    exhaustive = len(configs) == sum(1 for _ in space.grid())
    log(f"[{key}] grid: {len(configs)} points ({covers}) ...")
    grid = run_grid(
        workload, device, configs, BurstOptions().settings(), usable_cpus=usable_cpus, guard=guard
    )
    if not grid.ranked():
        raise WorkloadError(f"bench workload {key}: no grid point could be measured")
    log(f"[{key}] grid done in {grid.elapsed_s:.0f}s; best {grid.ranked()[0].config.label()}")
    return GridSearch(grid, space, covers, exhaustive)
