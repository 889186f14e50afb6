"""What a tuning hands back: its progress while it runs, and its result once it ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from autotune.diagnosis import Context
from autotune.errors import AutotuneError
from autotune.probe.ceilings import Ceilings
from autotune.profiling.nvtx import NvtxCost
from autotune.profiling.stage_run import StageProfile
from autotune.profiling.trace import TraceRecord
from autotune.recipe.model import Recipe
from autotune.search.choose import Choice
from autotune.search.trial import TrialRecord
from autotune.space.config import LoaderConfig
from autotune.space.start_method import import_what_workers_import
from autotune.transfer.device_loader import DeviceLoader
from autotune.workload.base import Workload


@dataclass
class TuningProgress:
    done: int
    elapsed_s: float
    budget_s: float
    best_samples_per_s: float | None
    last: TrialRecord | None = None


@dataclass
class TuneResult:
    """What a tuning measured. `recipe`, `best` and `baseline` are None only when nothing
    succeeded yet (a tuning interrupted early, or a broken workload)."""

    recipe: Recipe | None
    trials: list[TrialRecord]
    best: TrialRecord | None  # the chosen configuration's measurement closest to its mean
    baseline: TrialRecord | None
    workload: Workload
    device: torch.device
    elapsed_s: float
    context: Context
    interrupted: str | None = None  # the signal that stopped the tuning early
    run_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    trace: TraceRecord | None = None  # --trace
    nvtx: NvtxCost | None = None  # --nvtx: what one range costs here
    ceilings: Ceilings | None = None  # None where the probes could not run
    choice: Choice | None = None
    stop_reason: str = ""  # why the search phase ended
    stages: StageProfile | None = None  # the tuned configuration's pipeline stages, timed

    @property
    def config(self) -> LoaderConfig | None:
        return self.best.config if self.best is not None else None

    def _recipe(self) -> Recipe:
        if self.recipe is None:
            raise AutotuneError("no configuration was measured successfully: there is no recipe")
        return self.recipe

    def loader(self, **overrides: Any) -> DataLoader:
        """A DataLoader over the tuned workload's data with the recipe applied."""
        arguments = {
            **self.workload.loader_arguments(),
            **self._recipe().dataloader_kwargs(),
            **overrides,
        }
        import_what_workers_import(arguments.get("num_workers", 0))
        return DataLoader(**arguments)

    def device_loader(self, **overrides: Any) -> DeviceLoader:
        """The tuned loader yielding device-ready batches (transfer knobs applied)."""
        return self._recipe().wrap(self.loader(**overrides), self.device)
