"""From per-stage totals to the stage table: per stage its milliseconds per item, its share of a
worker's busy time, the share of that time it spends on a CPU, and the rate it alone would allow
per CPU. Pure arithmetic: tests drive it with made-up totals.

A worker's busy time is its __getitem__ calls plus its collates. Where stages inside __getitem__
were recognised, what of __getitem__ they leave is a stage of its own ("other in __getitem__"),
so the shares add up to 100%.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from autotune.profiling.stages import COLLATE, GETITEM, Stage, StageKind, StagePlan

OTHER_IN_GETITEM = "other in __getitem__"
FETCH = "fetch (__getitem__)"


@dataclass(frozen=True)
class StageRow:
    name: str
    kind: StageKind
    ms_per_item: float  # wall milliseconds per item (collate: per item of its batches)
    cpu_ms_per_item: float  # thread CPU milliseconds per item
    share_pct: float  # of a worker's busy time
    transform: str | None = None

    @property
    def cpu_pct(self) -> float | None:
        """How much of the stage's time is on a CPU: near 100 computes, far below waits
        (storage)."""
        return 100 * self.cpu_ms_per_item / self.ms_per_item if self.ms_per_item > 0 else None

    @property
    def items_per_s_per_cpu(self) -> float | None:
        """The rate one CPU doing only this stage would allow."""
        return 1000 / self.cpu_ms_per_item if self.cpu_ms_per_item > 0 else None


@dataclass(frozen=True)
class StageTable:
    rows: list[StageRow]
    items: int  # items timed (after each process's warm-up batch)
    processes: int  # processes that reported (workers, or the main process with num_workers=0)
    structure: str  # what was recognised, e.g. "Repeated > ImageFolder > Compose"

    @property
    def ms_per_item(self) -> float:
        return sum(r.ms_per_item for r in self.rows)

    @property
    def cpu_ms_per_item(self) -> float:
        return sum(r.cpu_ms_per_item for r in self.rows)

    @property
    def cpu_pct(self) -> float | None:
        """The share of a worker's busy time spent on a CPU."""
        return 100 * self.cpu_ms_per_item / self.ms_per_item if self.ms_per_item > 0 else None

    def loader_bound(self, cpus: float, saved_cpu_ms: float = 0.0) -> float | None:
        """The most samples/s `cpus` CPUs can produce with these per-item CPU costs (less
        `saved_cpu_ms` per item, for a cheaper equivalent)."""
        cost = self.cpu_ms_per_item - saved_cpu_ms
        return cpus * 1000 / cost if cost > 0 else None

    def dominant(self) -> StageRow:
        return max(self.rows, key=lambda r: r.share_pct)

    def row(self, name: str) -> StageRow | None:
        return next((r for r in self.rows if r.name == name), None)

    def as_dict(self, cpus: float | None = None) -> dict[str, Any]:
        def r(value: float | None, digits: int = 3) -> float | None:
            return None if value is None else round(value, digits)

        bound = self.loader_bound(cpus) if cpus else None
        return {
            "structure": self.structure,
            "items": self.items,
            "processes": self.processes,
            "ms_per_item": r(self.ms_per_item),
            "cpu_ms_per_item": r(self.cpu_ms_per_item),
            "cpu_pct": r(self.cpu_pct, 1),
            "usable_cpus": cpus,
            "loader_bound_samples_per_s": r(bound, 1),
            "stages": [
                {
                    "name": x.name,
                    "kind": str(x.kind),
                    "transform": x.transform,
                    "ms_per_item": r(x.ms_per_item, 4),
                    "cpu_ms_per_item": r(x.cpu_ms_per_item, 4),
                    "share_pct": r(x.share_pct, 2),
                    "cpu_pct": r(x.cpu_pct, 1),
                    "items_per_s_per_cpu": r(x.items_per_s_per_cpu, 1),
                }
                for x in self.rows
            ],
        }


def _rows(
    plan: StagePlan, totals: Mapping[str, Sequence[float]], items: int
) -> list[tuple[Stage, float, float]]:
    """(stage, wall s, cpu s) in pipeline order, with the remainder of __getitem__ as a stage."""

    def get(name: str) -> tuple[float, float]:
        _, wall, cpu = totals.get(name, (0, 0.0, 0.0))
        return wall, cpu

    inner = [(s, *get(s.name)) for s in plan.inner if totals.get(s.name, (0,))[0] > 0]
    wall, cpu = get(GETITEM)
    out = list(inner)
    if inner:
        # Clamped: the inner stages' own timing can add up to a hair more than the whole, and a
        # difference of CPU clocks read a little apart can exceed its wall time.
        other_wall = max(0.0, wall - sum(w for _, w, _ in inner))
        other_cpu = min(other_wall, max(0.0, cpu - sum(c for _, _, c in inner)))
        out.append((Stage(OTHER_IN_GETITEM, StageKind.FETCH), other_wall, other_cpu))
    else:
        out.append((Stage(FETCH, StageKind.FETCH), wall, cpu))
    out.append((Stage(COLLATE, StageKind.COLLATE), *get(COLLATE)))
    return out


def stage_table(
    plan: StagePlan, totals: Mapping[str, Sequence[float]], processes: int = 1
) -> StageTable | None:
    """The table of `totals` (stage -> count, wall s, cpu s, summed over processes); None when no
    item was timed."""
    items = int(totals.get(GETITEM, (0,))[0])
    if items <= 0:
        return None
    raw = _rows(plan, totals, items)
    busy = sum(wall for _, wall, _ in raw)
    rows = [
        StageRow(
            stage.name,
            stage.kind,
            1000 * wall / items,
            1000 * cpu / items,
            100 * wall / busy if busy > 0 else 0.0,
            stage.transform,
        )
        for stage, wall, cpu in raw
    ]
    return StageTable(rows, items, processes, plan.structure)
