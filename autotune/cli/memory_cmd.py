"""`autotune memory list|clear`: what the memory of runs holds (online/memory.py), and forgetting
it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from autotune.cli.common import DEBUG_OPTION, console, one_line_errors
from autotune.memory import store
from autotune.space.config import LoaderConfig
from autotune.strenum import StrEnum


class Action(StrEnum):
    LIST = "list"
    CLEAR = "clear"


def _folder(given: Path | None) -> Path | None:
    folder = store.where(given)
    if folder is None:
        console.print("autotune memory: the memory is off ($AUTOTUNE_MEMORY=off)", highlight=False)
    return folder


def _label(config: dict | None) -> str:
    return "-" if config is None else LoaderConfig.from_params(config).label()


@one_line_errors
def memory(
    action: Action = typer.Argument(..., help="list: what is remembered; clear: forget it all"),
    folder_given: Path | None = typer.Option(
        None,
        "--memory",
        metavar="FOLDER",
        help="the memory's folder (default: $AUTOTUNE_MEMORY, else ~/.cache/autotune/memory)",
    ),
    debug: bool = DEBUG_OPTION,
) -> None:
    """What autotune remembers of each workload's runs on this machine (the next run starts from
    it), or forget it: the next run of each workload explores from the script's arguments."""
    folder = _folder(folder_given)
    if folder is None:
        return
    if action is Action.CLEAR:
        console.print(
            f"autotune memory: {store.clear(folder)} entries cleared in {folder}",
            highlight=False,
            soft_wrap=True,
        )
        return
    _list(folder)


def _list(folder: Path) -> None:
    """One row per workload and machine remembered."""
    found = store.entries(folder)
    table = Table(title=f"autotune memory: {folder}")
    for column in (
        "entry",
        "loader",
        "dataset",
        "batch",
        "machine",
        "runs",
        "chosen",
        "explored",
        "updated",
    ):
        table.add_column(column)
    for path, entry in found:
        if entry is None:
            table.add_row(path.stem, "unreadable (replaced at the next run)", *[""] * 7)
            continue
        w, m = entry.key.get("workload", {}), entry.key.get("machine", {})
        machine = f"{m.get('usable_cpus')} CPUs, {m.get('ram_gib')} GiB, {m.get('gpu') or 'no GPU'}"
        table.add_row(
            path.stem,
            entry.name or "-",
            str(w.get("dataset")),
            str(w.get("batch_size")),
            machine,
            str(entry.runs),
            _label(entry.chosen),
            "finished" if entry.exploring_finished else "unfinished",
            entry.updated.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)
    if not found:
        console.print("nothing remembered yet", highlight=False)
