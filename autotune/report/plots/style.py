"""Shared look of the report's pictures: headless Figures (no pyplot state), one colour per part
of the step, used for the same part (and its bottleneck) in every plot."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

# Colour-blind-safe (Okabe-Ito) colours; a part of the step and the bottleneck it stands for share
# one.
PART_COLOURS = {"wait": "#E69F00", "copy": "#CC79A7", "compute": "#009E73", "other": "#7F7F7F"}
PART_LABELS = {
    "wait": "waiting for data",
    "copy": "host->device copy",
    "compute": "device compute",
    "other": "other (host work)",
}
BOTTLENECK_PART = {"input": "wait", "transfer": "copy", "device": "compute", "host": "other"}
LINE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000")
DPI = 120


def new_figure(width: float = 8.0, height: float = 4.6) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    fig.set_dpi(DPI)
    return fig


def style_axes(ax) -> None:
    ax.grid(True, axis="y", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=10)


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path
