"""The memory's schema: one entry per (workload, machine) key, typed at the edge (the file)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from autotune.strenum import StrEnum

MEMORY_VERSION: Final = 1


class Source(StrEnum):
    ONLINE = "online"  # an autotune.DataLoader's windows in the training loop
    TUNE = "tune"  # `autotune tune`'s recipe: a burst loop's rate, not the training's own


class Windows(BaseModel):
    """One configuration as measured: its windows' rates (batches/s) and spans (s), and what
    its steady steps waited."""

    model_config = ConfigDict(extra="ignore")

    config: dict[str, Any]  # LoaderConfig.as_dict()
    rates: list[float] = Field(default_factory=list)
    spans: list[float] = Field(default_factory=list)
    fresh_from: int = Field(0, ge=0)
    startup_s: float | None = None
    steps: int = Field(0, ge=0)
    steady_steps: int = Field(0, ge=0)
    steady_s: float = 0.0
    steady_wait_s: float = 0.0
    # The part of that wait on batches not yet made; None: written before it was kept (read as
    # all of the wait).
    steady_unready_s: float | None = None
    steady_wait_cpu_s: float = 0.0
    steady_work_cpu_s: float = 0.0
    failed: str | None = None
    ram_mib: float | None = None
    # A later run's check held it: its windows are at that run's level, no pick's (winner's
    # curse) bias left in them (decision/drift.py, selection_bias).
    checked: bool = False


class Entry(BaseModel):
    """What one (workload, machine) key remembers."""

    model_config = ConfigDict(extra="ignore")

    autotune_memory: Literal[1] = MEMORY_VERSION
    key: dict[str, Any]  # {"workload": ..., "machine": ...}: checked against the file's name
    source: Source = Source.ONLINE
    runs: int = Field(0, ge=0)  # the runs that wrote it (a run writes several times, counted once)
    last_run: str | None = None
    name: str | None = None  # the loader's name in the run that wrote it last
    start: dict[str, Any] | None = None  # the configuration that run started from
    chosen: dict[str, Any] | None = None  # its choice, or the best so far while exploring
    exploring_finished: bool = False
    stop: str | None = None  # why exploring stopped, as its report said
    exploration_steps: int = Field(0, ge=0)  # explored over the runs so far (the horizon's count)
    # what that exploring lost against its best so far (the bound's count), in seconds
    exploration_cost_s: float = Field(0.0, ge=0)
    measured: list[Windows] = Field(default_factory=list)
    # The choice's windows after exploring ended, over the rest of the run (policy.py's
    # HillClimb.settled): the rate the next run's check compares with, where there are enough.
    settled: Windows | None = None
    # Where the source is `tune`: the recipe's rates (samples/s) and batch size, for the report.
    tuned_samples_per_s: float | None = None
    updated: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
