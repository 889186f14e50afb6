"""Stacked step-time bars, PyTorch defaults against tuned: where each one's step time goes."""

from __future__ import annotations

from pathlib import Path

from matplotlib.patches import Patch

from autotune.diagnosis.split import PARTS, StepSplit
from autotune.report.plots.style import PART_COLOURS, PART_LABELS, new_figure, save, style_axes

# Segments at least this share of the longest bar are labelled in full; narrower ones down to
# SHORT_LABEL_SHARE get only their percentage; narrower still, none (it would not fit).
FULL_LABEL_SHARE = 0.2
SHORT_LABEL_SHARE = 0.06


def plot_split(bars: list[tuple[str, StepSplit]], path: Path) -> Path:
    """`bars`: (label, split) from top to bottom, e.g. defaults then tuned."""
    fig = new_figure(height=1.6 + 1.1 * len(bars))
    ax = fig.add_subplot()
    longest = max(split.step_ms for _, split in bars)
    no_copy = any(split.copy_pct is None for _, split in bars)
    for row, (_label, split) in enumerate(reversed(bars)):
        left = 0.0
        for part in PARTS:
            ms, pct = split.ms()[part], split.pcts()[part]
            if ms is None or ms <= 0:
                continue
            ax.barh(row, ms, left=left, height=0.6, color=PART_COLOURS[part], edgecolor="white")
            if ms >= SHORT_LABEL_SHARE * longest:
                text = (
                    f"{part}\n{ms:.1f} ms ({pct:.0f}%)"
                    if ms >= FULL_LABEL_SHARE * longest
                    else f"{pct:.0f}%"
                )
                ax.text(left + ms / 2, row, text, ha="center", va="center", fontsize=9)
            left += ms
        ax.text(
            left + longest * 0.01, row, f"{split.step_ms:.1f} ms/step", va="center", fontsize=10
        )
    ax.set_yticks(range(len(bars)), [label for label, _ in reversed(bars)], fontsize=10)
    ax.set_xlim(0, longest * 1.2)
    ax.set_xlabel("milliseconds per step", fontsize=11)
    handles = [
        Patch(
            color=PART_COLOURS[part],
            label=PART_LABELS[part]
            + (": n/a, no device copy here" if part == "copy" and no_copy else ""),
        )
        for part in PARTS
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=9, frameon=False)
    ax.set_title("Where the step time goes", fontsize=12)
    style_axes(ax)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    return save(fig, path)
