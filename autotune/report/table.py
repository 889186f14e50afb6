"""The trial table: one row per trial, best row marked, in three renderings."""

from __future__ import annotations

import csv
import io
from typing import Any

from rich.table import Table

from autotune.diagnosis.split import split_step
from autotune.search.trial import Phase, TrialRecord
from autotune.space.config import KNOB_NAMES, LoaderConfig
from autotune.space.knobs import KNOBS

NA = "n/a"

MEASURES = ("samples_per_s", "steady_samples_per_s", "restart_s", "speedup", "data_wait_pct", "copy_pct", "compute_pct", "other_pct",
            "bottleneck", "gpu_util_pct", "peak_mem_mib")
COLUMNS = ("trial", *KNOB_NAMES, *MEASURES, "status")
HEADERS = {"trial": "#", **{k.name: k.header for k in KNOBS}, "samples_per_s": "samples/s",
           "steady_samples_per_s": "steady/s", "restart_s": "restart s", "speedup": "speedup",
           "data_wait_pct": "wait %", "copy_pct": "copy %", "compute_pct": "compute %",
           "other_pct": "other %", "bottleneck": "bottleneck", "gpu_util_pct": "GPU util %", "peak_mem_mib": "peak PSS MiB",
           "status": "status"}


def _status(t: TrialRecord, best: TrialRecord | None) -> str:
    if best is not None and t.number == best.number:
        return "best"  # the chosen configuration's measurement closest to its mean
    if t.error:
        return f"{t.status}: {t.error}"  # failed, skipped, pruned, or rejected over the RAM budget
    return {Phase.CONFIRM: "re-measure", Phase.RECORD: "record"}.get(t.phase, t.status)


def rows(trials: list[TrialRecord], best: TrialRecord | None, baseline: TrialRecord | None) -> list[dict[str, Any]]:
    base = baseline.samples_per_s if baseline is not None and baseline.ok else None
    out = []
    for t in trials:
        r = t.result
        row: dict[str, Any] = {"trial": t.number, **t.config.as_dict()}
        if r is None:
            row.update(dict.fromkeys(MEASURES))
        else:
            split = split_step(r)
            row.update(samples_per_s=round(r.samples_per_s, 1),
                       steady_samples_per_s=round(r.steady_rate, 1),
                       restart_s=round(r.restart_cost_s, 2),
                       speedup=round(r.samples_per_s / base, 2) if base else None,
                       data_wait_pct=round(split.wait_pct, 1),
                       copy_pct=None if split.copy_pct is None else round(split.copy_pct, 1),
                       compute_pct=round(split.compute_pct, 1), other_pct=round(split.other_pct, 1),
                       bottleneck=t.diagnosis.bottleneck if t.diagnosis else None,
                       gpu_util_pct=None if r.gpu_util_pct is None else round(r.gpu_util_pct, 1),
                       peak_mem_mib=round(r.host.peak_pss_mib))
        row["status"] = _status(t, best)
        out.append(row)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return NA  # unknown here (e.g. GPU utilization without a GPU): never shown as 0
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


STATUS_STYLES = {"best": "bold green", "failed": "red", "skipped": "yellow", "rejected": "yellow",
                 "pruned": "dim"}

# The terminal shows the knobs as one short label (w4 pf2 persist pin ...) and the wait share with
# the verdict to fit 80 columns; Markdown and CSV keep one column per knob and every share.
TERMINAL_COLUMNS = ("trial", "config", "samples_per_s", "restart_s", "speedup", "data_wait_pct", "bottleneck",
                    "gpu_util_pct", "peak_mem_mib", "status")


def _with(columns: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    """`extra` columns (e.g. the sweep point and node of a merged study) right after the trial number."""
    return (columns[0], *extra, *columns[1:])


def to_rich(table_rows: list[dict[str, Any]], title: str | None = None,
            extra: tuple[str, ...] = ()) -> Table:
    table = Table(title=title, header_style="bold")
    columns = _with(TERMINAL_COLUMNS, extra)
    for col in columns:
        table.add_column(HEADERS.get(col, col),
                         justify="left" if col in ("config", "bottleneck", "status", *extra) else "right",
                         overflow="fold")
    for row in table_rows:
        style = STATUS_STYLES.get(row["status"].split(":", 1)[0])
        label = LoaderConfig.from_params(row).label()
        table.add_row(*(label if c == "config" else _cell(row[c]) for c in columns), style=style)
    return table


def to_markdown(table_rows: list[dict[str, Any]], extra: tuple[str, ...] = ()) -> str:
    columns = _with(COLUMNS, extra)
    lines = ["| " + " | ".join(HEADERS.get(c, c) for c in columns) + " |",
             "|" + "|".join("---" if c in ("bottleneck", "status", *extra) else "---:"
                            for c in columns) + "|"]
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
