"""Bench options: one typed model for the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from autotune.burst.runner import BurstSettings
from autotune.search.options import BurstOptions
from autotune.verify.steady import SETTLE_S

# The bench's recorded-vs-verified check: each tuning's configuration measured steadily right
# after it, in this many windows of this many seconds (--quick: shorter windows). Two 10 s windows
# are 20 s of steady measurement per tuning, at a third of the cost of three 20 s windows, which
# the full run's time cannot afford for fifteen workloads x three tunings.
VERIFY_SECONDS, VERIFY_SECONDS_QUICK, VERIFY_ROUNDS = 10.0, 5.0, 2
# The accuracy table: burst median of 3 against a 20 s steady measurement, median of 3.
ACCURACY_SECONDS, ACCURACY_SECONDS_QUICK, ACCURACY_ROUNDS, ACCURACY_ROUNDS_QUICK = 20.0, 5.0, 3, 2
N = TypeVar("N", int, float)


def _given_or(given: N | None, quick: bool, quick_default: N, default: N) -> N:
    """An option the user set, else the --quick or the full run's default."""
    if given is not None:
        return given
    return quick_default if quick else default


class BenchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quick: bool = Field(
        False, description="two workloads and a smaller grid: minutes, not half an hour"
    )
    workloads: list[str] | None = Field(
        None, description="bench workload keys (default: all, or the quick ones)"
    )
    budget_s: float = Field(60.0, gt=0, description="the tuner's wall-clock budget, its default")
    rounds: int = Field(
        3, ge=2, description="side-by-side rounds (each measures every configuration once)"
    )
    tunings: int = Field(
        3, ge=1, description="tunings per workload (seeds 0, 1, ...); the worst is reported"
    )
    device: str = "auto"
    max_workers: int | None = Field(
        None, ge=1, description="cap on num_workers for tuner and grid alike"
    )
    full_grid: bool = Field(
        False, description="every valid point, none of the workloads' knobs held off"
    )
    out_dir: Path = Path("results/bench")

    # The side-by-side bursts are longer than a tuner trial's: they produce the quoted ratios.
    sbs_min_steps: int = Field(12, ge=2)
    sbs_min_seconds: float = Field(1.0, gt=0)
    sbs_max_seconds: float = Field(4.0, gt=0)

    # Recorded vs verified: each tuning's steady measurement, right after it
    # (autotune.verify.steady).
    steady_seconds: float | None = Field(
        None, gt=0, description="each steady window (default 10 s, --quick 5 s)"
    )
    steady_rounds: int | None = Field(
        None, ge=1, description="steady windows per tuning, right after it (default 2)"
    )
    settle_s: float = Field(SETTLE_S, ge=0)

    def side_by_side_settings(self) -> BurstSettings:
        return BurstSettings(
            min_steps=self.sbs_min_steps,
            min_seconds=self.sbs_min_seconds,
            max_seconds=self.sbs_max_seconds,
        )

    @property
    def seeds(self) -> list[int]:
        return list(range(self.tunings))

    @property
    def verify_seconds(self) -> float:
        return _given_or(self.steady_seconds, self.quick, VERIFY_SECONDS_QUICK, VERIFY_SECONDS)

    @property
    def verify_rounds(self) -> int:
        return self.steady_rounds if self.steady_rounds is not None else VERIFY_ROUNDS

    @property
    def stem(self) -> str:
        """File name of the results: the quick run does not overwrite the full one."""
        return "bench-quick" if self.quick else "bench"


class AccuracyOptions(BaseModel):
    """`autotune bench --accuracy`: burst rates against steady rates, configuration by
    configuration."""

    model_config = ConfigDict(extra="forbid")

    quick: bool = False
    workloads: list[str] | None = None
    configs: list[str] | None = Field(
        None, description="configuration labels, e.g. 'w8 pf4 persist'"
    )
    steady_seconds: float | None = Field(None, gt=0)
    rounds: int | None = Field(
        None, ge=1, description="bursts and steady windows per configuration"
    )
    settle_s: float = Field(SETTLE_S, ge=0)
    # Bursts other than the tuner's trials, to find which of their settings a bias comes from:
    # on an H200 the trial bursts read 12% below the steady loop (results/gpu/2026-11-26-h200.md).
    burst: BurstOptions = Field(
        default_factory=BurstOptions, description="the bursts' settings (default: a tuner trial's)"
    )
    full_window: bool = Field(
        False,
        description="bursts as the record runs them: the window runs"
        " to its longest (max_seconds) instead of ending once steady",
    )
    device: str = "auto"
    out_dir: Path = Path("results/bench")

    @property
    def as_trials(self) -> bool:
        """Whether the bursts are the tuner's own trials."""
        return self.burst == BurstOptions() and not self.full_window

    @property
    def seconds(self) -> float:
        return _given_or(self.steady_seconds, self.quick, ACCURACY_SECONDS_QUICK, ACCURACY_SECONDS)

    @property
    def measure_rounds(self) -> int:
        return _given_or(self.rounds, self.quick, ACCURACY_ROUNDS_QUICK, ACCURACY_ROUNDS)

    @property
    def stem(self) -> str:
        return "accuracy-quick" if self.quick else "accuracy"


ONLINE_STEPS = 3000  # the least training per way; fewer makes a smoke run, flagged so


class OnlineBenchOptions(BaseModel):
    """`autotune bench --online`: defaults, autotune.DataLoader and the grid's best, trained
    alike."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[str] | None = None
    steps: int = Field(ONLINE_STEPS, ge=2, description="training steps per way")
    rounds: int = Field(1, ge=1, description="rounds, each training the three ways once")
    grid_from: Path = Field(
        Path("results/bench/bench.json"),
        description="a full bench's JSON: each workload's grid best",
    )
    run_grid: bool = Field(True, description="run the grid for a workload `grid_from` lacks")
    device: str = "auto"
    max_workers: int | None = Field(None, ge=1, description="cap on num_workers, online and grid")
    ranks: int = Field(1, ge=1, description="DDP ranks on this node each training runs as")
    # (a) is no target's, only (b)/(a)'s, and the slowest way by far (58 of the 105 minutes of
    # the ten-workload run): without it, three rounds fit where one did.
    defaults: bool = Field(True, description="train (a), PyTorch's defaults, for (b)/(a)")
    # The script's own configuration, as the tables write it: (a) trains it, (b) starts from it.
    start: str = "w0"
    out_dir: Path = Path("results/bench")

    @property
    def min_steps(self) -> int:
        """The least steps per training of a committed run: the single-process run's samples,
        shared among the ranks (each takes 1/ranks of every epoch)."""
        return -(-ONLINE_STEPS // self.ranks)

    @property
    def stem(self) -> str:
        """File name of the results: a run of several ranks does not overwrite the single one."""
        return "online" if self.ranks == 1 else f"online-ranks{self.ranks}"
