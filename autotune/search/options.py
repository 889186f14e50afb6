"""Tuning options: one typed model shared by the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autotune.burst.runner import BurstSettings


_DEFAULT = BurstSettings()


class BurstOptions(BaseModel):
    """The validated, user-facing face of BurstSettings (same fields, same defaults)."""

    model_config = ConfigDict(extra="forbid")

    min_steps: int = Field(_DEFAULT.min_steps, ge=2)
    min_seconds: float = Field(_DEFAULT.min_seconds, gt=0)
    max_seconds: float = Field(_DEFAULT.max_seconds, gt=0)
    warmup_steps: int = Field(_DEFAULT.warmup_steps, ge=0)

    def settings(self, max_seconds: float | None = None) -> BurstSettings:
        return BurstSettings(min_steps=self.min_steps, min_seconds=self.min_seconds,
                             max_seconds=min(self.max_seconds, max_seconds or self.max_seconds),
                             warmup_steps=self.warmup_steps)


class TuneOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget_s: float = Field(60.0, gt=0, description="wall-clock budget for the whole tuning")
    max_trials: int | None = Field(None, ge=1, description="stop after this many measured trials")
    device: str = "auto"
    seed: int | None = 0
    max_workers: int | None = Field(None, ge=1, description="cap on num_workers (default 4x usable CPUs, at most 32)")
    results_dir: Path | None = Field(Path("results"), description="where run folders go; None writes nothing")
    storage: str | None = Field(None, description="optuna storage: RDB URL or journal file path;"
                                " default: study.journal in the run folder (in memory without one)")
    study_name: str | None = Field(None, description="join or create this study in the storage")
    ranks_per_node: int | None = Field(None, ge=1, description="measure each configuration on this"
                                       " many ranks at once (one node of a multi-rank job), scored by"
                                       " the slowest; default: one, with the CPU budget of one rank"
                                       " of the ranks the environment announces")
    burst: BurstOptions = Field(default_factory=BurstOptions)
    target_rate: float | None = Field(None, gt=0, description="replace the step with a simulated"
                                      " accelerator consuming this many samples/s")
    trace: bool = Field(False, description="record a torch.profiler trace of the tuned configuration")
    nvtx: bool = Field(False, description="wrap fetch, collate, copy and step in NVTX ranges")
