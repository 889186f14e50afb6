"""Tuning options: one typed model shared by the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from autotune.burst.runner import BurstSettings
from autotune.space.knobs import opt_in_knobs

# Default time limit of a burst: the longest window twice over, plus room for starting a large
# worker pool and warming up. Past it the burst counts as hung.
HUNG_AFTER_WINDOWS = 2
STARTUP_ALLOWANCE_S = 30.0


_DEFAULT = BurstSettings()


class BurstOptions(BaseModel):
    """The validated, user-facing face of BurstSettings (same fields, same defaults)."""

    model_config = ConfigDict(extra="forbid")

    min_steps: int = Field(_DEFAULT.min_steps, ge=2)
    min_seconds: float = Field(_DEFAULT.min_seconds, gt=0)
    max_seconds: float = Field(_DEFAULT.max_seconds, gt=0)
    warmup_steps: int = Field(_DEFAULT.warmup_steps, ge=0)
    time_limit_s: float | None = Field(
        None,
        gt=0,
        description="a burst running longer fails its"
        " trial as hung; default: 2x max_seconds + 30 s",
    )

    @model_validator(mode="after")
    def _limit_after_window(self) -> BurstOptions:
        if self.time_limit_s is not None and self.time_limit_s <= self.max_seconds:
            raise ValueError(
                f"time_limit_s ({self.time_limit_s:g}) must exceed max_seconds"
                f" ({self.max_seconds:g}): the window alone may take that long"
            )
        return self

    @property
    def time_limit(self) -> float:
        return self.time_limit_s or HUNG_AFTER_WINDOWS * self.max_seconds + STARTUP_ALLOWANCE_S

    def settings(
        self, max_seconds: float | None = None, full_window: bool = False
    ) -> BurstSettings:
        """`full_window`: the window runs to its longest instead of ending once steady."""
        longest = min(self.max_seconds, max_seconds or self.max_seconds)
        return BurstSettings(
            min_steps=self.min_steps,
            min_seconds=longest if full_window else self.min_seconds,
            max_seconds=longest,
            warmup_steps=self.warmup_steps,
            time_limit_s=self.time_limit,
        )


class TuneOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget_s: float = Field(60.0, gt=0, description="wall-clock budget for the whole tuning")
    max_trials: int | None = Field(None, ge=1, description="stop after this many measured trials")
    early_stop: bool = Field(
        True,
        description="end the search once the device ceiling is reached or"
        " nothing improves; False: only max_trials and the budget end it",
    )
    knobs: tuple[str, ...] = Field(
        (),
        description="opt-in knobs to search as well (e.g. in_order):"
        " those that change what the training sees, not only its speed",
    )
    device: str = "auto"
    seed: int | None = 0
    max_workers: int | None = Field(
        None, ge=1, description="cap on num_workers (default 4x usable CPUs, at most 32)"
    )
    ram_budget_mib: float | None = Field(
        None,
        gt=0,
        description="host RAM (summed PSS of main process and workers) a configuration"
        " may use; default half of the RAM available at the start",
    )
    results_dir: Path | None = Field(
        Path("results"), description="where run folders go; None writes nothing"
    )
    storage: str | None = Field(
        None,
        description="optuna storage: RDB URL or journal file path;"
        " default: study.journal in the run folder (in memory without one)",
    )
    study_name: str | None = Field(None, description="join or create this study in the storage")
    ranks_per_node: int | None = Field(
        None,
        ge=1,
        description="measure each configuration on this"
        " many ranks at once (one node of a multi-rank job), scored by"
        " the slowest; default: one, with the CPU budget of one rank"
        " of the ranks the environment announces",
    )
    resume: Path | None = Field(
        None,
        description="run folder of an earlier tuning to continue:"
        " its study, and its folder for the report",
    )
    burst: BurstOptions = Field(default_factory=BurstOptions)
    target_rate: float | None = Field(
        None,
        gt=0,
        description="replace the step with a simulated accelerator consuming this many samples/s",
    )
    trace: bool = Field(
        False, description="record a torch.profiler trace of the tuned configuration"
    )
    nvtx: bool = Field(False, description="wrap fetch, collate, copy and step in NVTX ranges")
    stages: bool = Field(
        True,
        description="time the pipeline's stages inside the workers in one"
        " short burst of the tuned configuration, within the budget",
    )

    @field_validator("knobs")
    @classmethod
    def _opt_in(cls, knobs: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [k for k in knobs if k not in opt_in_knobs()]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not an opt-in knob of this torch (opt-in knobs:"
                f" {', '.join(opt_in_knobs()) or 'none'})"
            )
        return knobs
