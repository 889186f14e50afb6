"""Where a worker's time goes: one bar per pipeline stage, its milliseconds per item, split into
time on a CPU and time off it, labelled with its share of the worker's time."""

from __future__ import annotations

from pathlib import Path

from matplotlib.patches import Patch

from autotune.profiling.stage_table import StageTable
from autotune.report.plots.style import PART_COLOURS, new_figure, save, style_axes

CPU_COLOUR, OFF_CPU_COLOUR = PART_COLOURS["wait"], "#F5D39A"


def plot_stages(table: StageTable, path: Path) -> Path:
    fig = new_figure(height=1.4 + 0.42 * len(table.rows))
    ax = fig.add_subplot()
    longest = max(r.ms_per_item for r in table.rows) or 1.0
    top = table.dominant().name
    for y, row in enumerate(reversed(table.rows)):
        on_cpu = min(row.cpu_ms_per_item, row.ms_per_item)
        ax.barh(y, on_cpu, height=0.6, color=CPU_COLOUR, edgecolor="white")
        ax.barh(
            y,
            row.ms_per_item - on_cpu,
            left=on_cpu,
            height=0.6,
            color=OFF_CPU_COLOUR,
            edgecolor="white",
        )
        ax.text(
            row.ms_per_item + 0.01 * longest,
            y,
            f"{row.ms_per_item:.2f} ms ({row.share_pct:.0f}%)",
            va="center",
            fontsize=9,
            fontweight="bold" if row.name == top else "normal",
        )
    ax.set_yticks(range(len(table.rows)), [r.name for r in reversed(table.rows)], fontsize=10)
    ax.set_xlim(0, longest * 1.3)
    ax.set_xlabel("milliseconds per item in a worker (share of its busy time)", fontsize=11)
    ax.set_title(f"Where a worker's time goes: {table.ms_per_item:.2f} ms per item", fontsize=12)
    fig.legend(
        handles=[
            Patch(color=CPU_COLOUR, label="on a CPU"),
            Patch(color=OFF_CPU_COLOUR, label="off CPU (waiting or preempted)"),
        ],
        loc="outside lower center",
        ncol=2,
        fontsize=9,
        frameon=False,
    )
    style_axes(ax)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    return save(fig, path)
