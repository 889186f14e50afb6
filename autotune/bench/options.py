"""Bench options: one typed model for the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autotune.burst.runner import BurstSettings


class BenchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quick: bool = Field(False, description="two workloads and a smaller grid: minutes, not half an hour")
    workloads: list[str] | None = Field(None, description="bench workload keys (default: all, or the quick ones)")
    budget_s: float = Field(60.0, gt=0, description="the tuner's wall-clock budget, its default")
    rounds: int = Field(3, ge=2, description="side-by-side rounds (each measures every configuration once)")
    stability: bool = Field(True, description="tune each workload a second time (another seed) and compare")
    device: str = "auto"
    max_workers: int | None = Field(None, ge=1, description="cap on num_workers for tuner and grid alike")
    out_dir: Path = Path("results/bench")

    # The side-by-side bursts are longer than a tuner trial's: they produce the quoted ratios.
    sbs_min_steps: int = Field(12, ge=2)
    sbs_min_seconds: float = Field(1.0, gt=0)
    sbs_max_seconds: float = Field(4.0, gt=0)

    def side_by_side_settings(self) -> BurstSettings:
        return BurstSettings(min_steps=self.sbs_min_steps, min_seconds=self.sbs_min_seconds,
                             max_seconds=self.sbs_max_seconds)

    @property
    def stem(self) -> str:
        """File name of the results: the quick run does not overwrite the full one."""
        return "bench-quick" if self.quick else "bench"
