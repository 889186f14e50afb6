"""`autotune bench --online`'s results as typed JSON: per workload, each round's three trainings."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks.online_figures import Way
from benchmarks.provenance import Recorded
from benchmarks.targets import targets_met


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OnlineRound(_Strict):
    """One round: the three ways, one after the other in `order`, the same number of steps each."""

    order: list[Way]
    seconds: dict[Way, float]  # wall time of the whole run, worker start-up included
    exploration_steps: int | None  # k; None: (b) was still exploring at the last step
    exploration_cost_s: float | None  # (b)'s time for steps [0, k) less (c)'s
    tuner_cost_s: float  # the online tuner's own estimate of that cost
    stop_reason: str | None
    chosen: str | None  # (b)'s configuration once exploring ended
    whole: float  # (b)/(c) over the whole run
    after: float | None  # (b)/(c) over steps [k, N)
    vs_defaults: float | None  # (b)/(a) over the whole run; None where (a) was not run
    # Each rank's choice where the ways ran as several DDP ranks (bench --online --ranks).
    rank_choices: list[str | None] | None = None
    # (b)'s windows, batches/s, by configuration in the order measured (a single process's run):
    # what its verdicts were reached on. None where not recorded (several ranks).
    windows: dict[str, list[float]] | None = None


class OnlineRow(_Strict):
    """A workload's figures; the flat ones are the worst round's."""

    key: str
    spec: str
    what: str
    ideal: str  # (c)'s configuration, the grid's best
    ideal_params: dict[str, Any]
    ideal_source: str  # the bench.json it came from, or the grid run here
    rounds: list[OnlineRound]
    whole: float  # the worst round's
    after: float | None  # the worst round's among those where (b) ended exploring
    vs_defaults: float | None  # the worst round's
    targets: dict[str, bool | None]
    # A short run's own length, known to (b) (its ideal: the best hand-set configuration over
    # it); None: the report's steps.
    steps: int | None = None


class OnlineReport(Recorded):
    environment: dict[str, Any]
    steps: int  # per training
    ranks: int = 1  # DDP ranks on this node each way's training ran as
    defaults: bool = True  # whether (a), PyTorch's defaults, was trained (--no-defaults: not)
    start: str = "w0"  # the script's configuration: (a) trains it, (b) starts from it
    min_steps: int  # the minimum: fewer is a smoke run
    rounds: int
    grid_from: str
    online: dict[str, Any]  # the options autotune.DataLoader ran with
    total_s: float
    rows: list[OnlineRow]

    @property
    def below_minimum(self) -> bool:
        return self.steps < self.min_steps

    def targets_met(self) -> dict[str, bool | None]:
        return targets_met(row.targets for row in self.rows)
