"""The trial table: one row per trial, best row marked, in three renderings."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

from autotune.diagnosis.split import split_step
from autotune.search.trial import Phase, TrialRecord
from autotune.space.config import KNOB_NAMES, LoaderConfig
from autotune.space.knobs import KNOBS

if TYPE_CHECKING:
    from rich.table import Table

NA = "n/a"

MEASURES = (
    "samples_per_s",
    "steady_samples_per_s",
    "restart_s",
    "speedup",
    "data_wait_pct",
    "copy_pct",
    "compute_pct",
    "other_pct",
    "bottleneck",
    "gpu_util_pct",
    "peak_mem_mib",
)
COLUMNS = ("trial", *KNOB_NAMES, *MEASURES, "status")
HEADERS = {
    "trial": "#",
    **{k.name: k.header for k in KNOBS},
    "samples_per_s": "samples/s",
    "steady_samples_per_s": "steady/s",
    "restart_s": "restart s",
    "speedup": "speedup",
    "data_wait_pct": "wait %",
    "copy_pct": "copy %",
    "compute_pct": "compute %",
    "other_pct": "other %",
    "bottleneck": "bottleneck",
    "gpu_util_pct": "GPU util %",
    "peak_mem_mib": "peak PSS MiB",
    "status": "status",
}


def _status(t: TrialRecord, best: TrialRecord | None) -> str:
    if best is not None and t.number == best.number:
        return "best"  # the chosen configuration's measurement closest to its mean
    if t.error:
        return f"{t.status}: {t.error}"  # failed, skipped, pruned, or rejected over the RAM budget
    return {Phase.CONFIRM: "re-measure", Phase.RECORD: "record"}.get(t.phase, t.status)


def rows(
    trials: list[TrialRecord], best: TrialRecord | None, baseline: TrialRecord | None
) -> list[dict[str, Any]]:
    base = baseline.samples_per_s if baseline is not None and baseline.ok else None
    out = []
    for t in trials:
        r = t.result
        row: dict[str, Any] = {"trial": t.number, **t.config.as_dict()}
        if r is None:
            row.update(dict.fromkeys(MEASURES))
        else:
            split = split_step(r)
            row.update(
                samples_per_s=round(r.samples_per_s, 1),
                steady_samples_per_s=round(r.steady_rate, 1),
                restart_s=round(r.restart_cost_s, 2),
                speedup=round(r.samples_per_s / base, 2) if base else None,
                data_wait_pct=round(split.wait_pct, 1),
                copy_pct=None if split.copy_pct is None else round(split.copy_pct, 1),
                compute_pct=round(split.compute_pct, 1),
                other_pct=round(split.other_pct, 1),
                bottleneck=t.diagnosis.bottleneck if t.diagnosis else None,
                gpu_util_pct=None if r.gpu_util_pct is None else round(r.gpu_util_pct, 1),
                peak_mem_mib=round(r.host.peak_pss_mib),
            )
        row["status"] = _status(t, best)
        out.append(row)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return NA  # unknown here (e.g. GPU utilization without a GPU): never shown as 0
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


STATUS_STYLES = {
    "best": "bold green",
    "failed": "red",
    "skipped": "yellow",
    "rejected": "yellow",
    "pruned": "dim",
}

# The terminal shows the knobs as one short label (w4 pf2 persist pin ...) and the wait share with
# the verdict; Markdown and CSV keep one column per knob and every share.
TERMINAL_COLUMNS = (
    "trial",
    "config",
    "samples_per_s",
    "restart_s",
    "speedup",
    "data_wait_pct",
    "bottleneck",
    "gpu_util_pct",
    "peak_mem_mib",
    "status",
)
# Where the console is too narrow (an 80-column Slurm or CI log), columns go in this order, first
# the least telling; the trial number, the configuration, its rate and status always stay.
DROP_ORDER = ("peak_mem_mib", "gpu_util_pct", "restart_s", "bottleneck", "data_wait_pct", "speedup")
# A rich table spends 3 characters per column (padding and a rule) and 1 for the closing rule.
_FRAME_PER_COLUMN, _FRAME = 3, 1
_MIN_STATUS = 10  # 'failed: …' still says what happened
_STATUS_FIT = 20  # the status width columns are dropped for; a longer one is cut


def _with(columns: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    """`extra` columns (e.g. the sweep point and node of a merged study) right after the trial
    number."""
    return (columns[0], *extra, *columns[1:])


def _texts(table_rows: list[dict[str, Any]], columns: tuple[str, ...]) -> list[list[str]]:
    def text(row: dict[str, Any], col: str) -> str:
        return LoaderConfig.from_params(row).label() if col == "config" else _cell(row[col])

    return [[text(row, c) for c in columns] for row in table_rows]


def fitting_columns(
    table_rows: list[dict[str, Any]], width: int | None, extra: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], int | None]:
    """The terminal columns that fit `width` characters unbroken (all of them for None), the
    least telling dropped first, and the width left for the status (None: no limit). The full
    table is always in trials.md and trials.csv."""
    columns = _with(TERMINAL_COLUMNS, extra)
    if width is None:
        return columns, None
    texts = _texts(table_rows, columns)
    need = {
        c: max([len(HEADERS.get(c, c))] + [len(r[i]) for r in texts]) for i, c in enumerate(columns)
    }
    need["status"] = min(need["status"], _STATUS_FIT)  # one long failure must not empty the table

    def total(kept: list[str]) -> int:
        return sum(need[c] + _FRAME_PER_COLUMN for c in kept) + _FRAME

    kept = list(columns)
    for col in DROP_ORDER:
        if total(kept) <= width:
            break
        kept.remove(col)
    # A long failure is cut, not the configuration: rich would otherwise shrink every column.
    others = total([c for c in kept if c != "status"]) + _FRAME_PER_COLUMN
    return tuple(kept), max(width - others, _MIN_STATUS)


def to_rich(
    table_rows: list[dict[str, Any]],
    title: str | None = None,
    extra: tuple[str, ...] = (),
    width: int | None = None,
) -> Table:
    """The table for a console `width` characters wide (None: every terminal column). Cells never
    wrap: a word split over two lines ("re-me / asure") is unreadable in a log, so a status too
    long for what is left (a long failure) ends in an ellipsis instead."""
    # Imported here: the online report (every rank `autotune run` starts) is Markdown alone.
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    columns, status_width = fitting_columns(table_rows, width, extra)
    for col in columns:
        table.add_column(
            HEADERS.get(col, col),
            justify="left" if col in ("config", "bottleneck", "status", *extra) else "right",
            no_wrap=True,
            overflow="ellipsis",
            max_width=status_width if col == "status" else None,
        )
    for row, cells in zip(table_rows, _texts(table_rows, columns), strict=True):
        style = STATUS_STYLES.get(row["status"].split(":", 1)[0])
        table.add_row(*cells, style=style)
    return table


def to_markdown(
    table_rows: list[dict[str, Any]],
    extra: tuple[str, ...] = (),
    columns: tuple[str, ...] = COLUMNS,
) -> str:
    """A Markdown table of `columns` (every one by default) and `extra`."""
    columns = _with(columns, extra)
    lines = [
        "| " + " | ".join(HEADERS.get(c, c) for c in columns) + " |",
        "|"
        + "|".join("---" if c in ("bottleneck", "status", *extra) else "---:" for c in columns)
        + "|",
    ]
    for row in table_rows:
        cells = [_cell(row[c]) for c in columns]
        if row["status"] == "best":
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def to_csv(table_rows: list[dict[str, Any]], extra: tuple[str, ...] = ()) -> str:
    columns = _with(COLUMNS, extra)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns))
    writer.writeheader()
    for row in table_rows:
        writer.writerow({c: "" if row[c] is None else row[c] for c in columns})
    return buffer.getvalue()
