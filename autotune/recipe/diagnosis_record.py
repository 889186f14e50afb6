"""The recipe's diagnosis block: what holds the tuned configuration back, and where a worker's
time goes, stage by stage."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from autotune.recipe.strict import Strict as _Strict


class StageRecord(_Strict):
    """One stage of the input pipeline, timed inside the workers."""

    name: str
    kind: Literal["decode", "transform", "fetch", "collate"]
    transform: str | None = None  # the transform's class name
    ms_per_item: float  # wall milliseconds per item
    cpu_ms_per_item: float
    share_pct: float  # of a worker's busy time; the stages add up to 100
    cpu_pct: float | None = None  # of the stage's own time spent on a CPU
    items_per_s_per_cpu: float | None = None  # what one CPU doing only this stage would allow


class AlternativeRecord(_Strict):
    """A cheaper equivalent of some stages, measured on the tuning machine."""

    name: str
    replaces: list[str]
    before_ms_per_item: float
    after_ms_per_item: float
    gain_pct: float
    items: int
    detail: str


class StageTableRecord(_Strict):
    """Where a worker's time goes, from one short burst of the tuned configuration."""

    structure: str  # what was recognised, e.g. "Repeated > ImageFolder > Compose"
    items: int
    processes: int
    ms_per_item: float
    cpu_ms_per_item: float
    cpu_pct: float | None = None
    usable_cpus: float | None = None
    loader_bound_samples_per_s: float | None = None  # usable CPUs x 1000 / cpu_ms_per_item
    stages: list[StageRecord]
    dominant: str
    samples_per_s_while_timed: float
    profile_s: float
    alternatives: list[AlternativeRecord] = Field(default_factory=list)


class DiagnosisRecord(_Strict):
    """What holds the tuned configuration back, the measurements that say so, and what to do."""

    bottleneck: Literal["input", "transfer", "device", "host"]
    evidence: dict[str, Any]
    recommendations: list[str]
    stages: StageTableRecord | None = None
