"""Best-so-far throughput over tuning time, each trial coloured by its verdict."""

from __future__ import annotations

from pathlib import Path

from autotune.report.plots.style import BOTTLENECK_PART, PART_COLOURS, new_figure, save, style_axes
from autotune.search.trial import TrialRecord


def plot_progress(trials: list[TrialRecord], baseline: TrialRecord, path: Path) -> Path:
    fig = new_figure()
    ax = fig.add_subplot()
    measured = [(t.finished_s, t) for t in trials if t.ok and t.finished_s is not None]
    times, best_so_far, best = [0.0], [0.0], 0.0
    for finished_s, t in sorted(measured, key=lambda ended: ended[0]):
        best = max(best, t.rate)
        times.append(finished_s)
        best_so_far.append(best)
    ax.step(
        times[1:],
        best_so_far[1:],
        where="post",
        color="#0072B2",
        linewidth=2.2,
        label="best so far",
    )
    seen: set[str] = set()
    for finished_s, t in measured:
        verdict = t.diagnosis.bottleneck if t.diagnosis else None
        colour = PART_COLOURS[BOTTLENECK_PART[verdict]] if verdict else "black"
        label = f"trial: {verdict}-bound" if verdict and verdict not in seen else None
        seen.add(verdict or "")
        ax.scatter(
            [finished_s],
            [t.rate],
            s=45,
            color=colour,
            edgecolor="black",
            linewidth=0.5,
            zorder=4,
            label=label,
        )
    if baseline.ok:
        ax.axhline(
            baseline.rate,
            color="black",
            linestyle=":",
            linewidth=1.2,
            label=f"PyTorch defaults ({baseline.rate:.0f}/s)",
        )
    ax.set_xlabel("tuning time (s)", fontsize=11)
    ax.set_ylabel("samples / s", fontsize=11)
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.set_title(
        "Best throughput so far during tuning (dots: each trial, coloured by its verdict)",
        fontsize=12,
    )
    style_axes(ax)
    ax.legend(fontsize=9, loc="lower right", framealpha=0.9)
    return save(fig, path)
