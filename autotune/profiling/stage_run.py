"""The profiling run: one short burst of the tuned configuration with its stages timed.

The burst is the tuner's own (run_burst: start-up, warm-up, window, teardown), on a copy of the
workload whose dataset and collate_fn are wrapped (stages.py); the wrappers exist only in that
copy and its workers, which are gone when the burst returns, so nothing stays active. The timings
come back through files in a temporary folder made for this run alone.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autotune.burst.runner import BurstSettings, run_burst
from autotune.profiling.alternatives import Alternative, measure_alternatives
from autotune.profiling.stage_recorder import read_totals, release
from autotune.profiling.stage_table import StageTable, stage_table
from autotune.profiling.stages import timed_workload
from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload


@dataclass(frozen=True)
class StageProfile:
    table: StageTable | None  # None: no item was timed (the burst was too short)
    samples_per_s: float  # the burst's rate with the stages timed
    duration_s: float  # the whole profiling run, alternatives included
    alternatives: list[Alternative] = field(default_factory=list)


def profile_stages(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    settings: BurstSettings,
    usable_cpus: int = 1,
    alternatives: bool = True,
) -> StageProfile:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="autotune-stages-") as tmp:
        directory = Path(tmp)
        timed, plan = timed_workload(workload, directory)
        burst = run_burst(timed, config, device, settings, usable_cpus=usable_cpus)
        release(tmp)  # num_workers=0: the main process did the work
        totals, processes = read_totals(directory)
    table = stage_table(plan, totals, processes)
    found = (
        measure_alternatives(workload.dataset, workload.batch_size, device) if alternatives else []
    )
    return StageProfile(table, burst.samples_per_s, time.perf_counter() - t0, found)
