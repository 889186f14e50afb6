"""`autotune bench --online`'s ideal: each workload's grid best, from a committed full bench's JSON
(the grid costs minutes per workload), or from a grid run here for a workload it lacks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import torch
from pydantic import BaseModel, ConfigDict, ValidationError

from autotune.errors import OptionsError, first_error, json_object
from autotune.search.guard import default_ram_budget_mib
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.workload.base import Workload
from benchmarks.accuracy import parse_config
from benchmarks.grid import search_grid
from benchmarks.workloads import BenchWorkload


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")  # only what the ideal needs of a bench.json


class GridRow(_Loose):
    key: str
    spec: str
    grid_best: str


class GridFile(_Loose):
    created: datetime | None = None
    environment: dict[str, Any] = {}
    rows: list[GridRow]

    def best(self, bw: BenchWorkload, device: torch.device) -> str | None:
        """The grid best's label for `bw`, if this file measured the same spec on the same kind of
        device (a grid best on the CPU is not the ideal on a GPU)."""
        if str(self.environment.get("device", "")).split(":")[0] != device.type:
            return None
        return next((r.grid_best for r in self.rows if r.key == bw.key and r.spec == bw.spec), None)


def read_grid_file(path: Path) -> GridFile | None:
    """The bench.json at `path`; None where there is none."""
    if not path.is_file():
        return None
    try:
        text = path.read_text()
    except OSError as exc:
        raise OptionsError(f"cannot read --grid-from {path}: {exc.strerror or exc}") from None
    data = json_object(text, f"--grid-from {path}", OptionsError, "a bench.json")
    try:
        return GridFile.model_validate(data)
    except ValidationError as exc:
        raise OptionsError(
            f"--grid-from {path} is not a bench.json: {first_error(exc, 'file')}"
        ) from None


@dataclass(frozen=True)
class Ideal:
    config: LoaderConfig
    source: str  # where the configuration came from, for the report


def file_best(
    bw: BenchWorkload,
    device: torch.device,
    grid_file: GridFile | None,
    grid_from: Path,
    *,
    run_grid: bool,
) -> str | None:
    """The file's grid-best label for `bw`; None where the grid must run for it, an OptionsError
    where it must not."""
    label = None if grid_file is None else grid_file.best(bw, device)
    if label is None and not run_grid:
        raise OptionsError(
            f"{grid_from} has no grid best for workload {bw.key} ({bw.spec}) on"
            f" {device.type}: run its grid (without --no-grid) or pass --grid-from"
            " a bench.json that has it"
        )
    return label


def ideal_config(
    bw: BenchWorkload,
    workload: Workload,
    device: torch.device,
    grid_file: GridFile | None,
    grid_from: Path,
    *,
    run_grid: bool,
    max_workers: int | None,
    log: Callable[[str], None],
) -> Ideal:
    """(c)'s configuration: the file's grid best, else (with `run_grid`) the grid's, run now."""
    label = file_best(bw, device, grid_file, grid_from, run_grid=run_grid)
    if label is not None:
        when = (
            ""
            if grid_file is None or grid_file.created is None
            else f" of {grid_file.created:%Y-%m-%d}"
        )
        return Ideal(parse_config(label), f"{grid_from}{when}")
    log(f"[{bw.key}] {grid_from} has no grid best for it: running the grid")
    search = search_grid(
        bw.key,
        workload,
        device,
        bw.held_off(device.type),
        max_workers=max_workers,
        ram_budget_mib=default_ram_budget_mib(),
        usable_cpus=usable_cpus().count,
        log=log,
        workers=bw.grid_workers,
    )
    return Ideal(
        search.best,
        f"grid run here ({len(search.run.points)} points, {search.covers},"
        f" {search.run.elapsed_s:.0f}s)",
    )
