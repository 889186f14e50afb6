"""Throughput against num_workers, one line per prefetch_factor: where adding workers stops
paying."""

from __future__ import annotations

from pathlib import Path

from autotune.diagnosis.effects import best_rate_by_workers
from autotune.report.plots.style import LINE_COLOURS, new_figure, save, style_axes
from autotune.search.trial import TrialRecord


def _best_points(trials: list[TrialRecord]) -> dict[int, dict[int, float]]:
    """prefetch_factor -> num_workers -> best rate (other knobs vary between trials)."""
    factors = {t.config.effective_prefetch_factor for t in trials if t.ok}
    return {
        pf: best_rate_by_workers([t for t in trials if t.config.effective_prefetch_factor == pf])
        for pf in factors
    }


def plot_workers(
    trials: list[TrialRecord],
    best: TrialRecord,
    path: Path,
    device_ceiling: float | None = None,
    ceiling_label: str = "device ceiling",
    tuned_rate: float | None = None,
) -> Path:
    """`tuned_rate`: the chosen configuration's mean over its measurements (the headline figure);
    the star sits there rather than on one of its bursts."""
    tuned = best.rate if tuned_rate is None else tuned_rate
    fig = new_figure()
    ax = fig.add_subplot()
    lines = _best_points(trials)
    no_workers = lines.pop(0, None)
    for colour, pf in zip(LINE_COLOURS, sorted(lines), strict=False):
        points = sorted(lines[pf].items())
        ax.plot(
            [w for w, _ in points],
            [r for _, r in points],
            marker="o",
            color=colour,
            linewidth=1.8,
            markersize=6,
            label=f"prefetch_factor={pf}",
        )
    if no_workers:
        ax.plot(
            [0],
            [no_workers[0]],
            marker="s",
            color="black",
            markersize=8,
            linestyle="none",
            label="num_workers=0 (loads in the main process)",
        )
    ax.plot(
        [best.config.num_workers],
        [tuned],
        marker="*",
        markersize=20,
        color="gold",
        markeredgecolor="black",
        linestyle="none",
        label="tuned",
        zorder=5,
    )
    if device_ceiling:
        ax.axhline(
            device_ceiling,
            color="black",
            linestyle="--",
            linewidth=1.2,
            label=f"{ceiling_label} ({device_ceiling:.0f}/s)",
        )
    ax.set_xlabel("num_workers", fontsize=11)
    ax.set_ylabel("samples / s", fontsize=11)
    highest = max(
        [r for line in lines.values() for r in line.values()]
        + list((no_workers or {}).values())
        + [tuned, device_ceiling or 0.0]
    )
    ax.set_ylim(0, highest * 1.15)  # headroom: the tuned star and the legend stay clear of the top
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # MaxNLocator's
    ax.set_title(
        "Throughput by num_workers and prefetch_factor\n(best trial at each point;"
        " the other knobs vary)",
        fontsize=12,
    )
    style_axes(ax)
    ax.legend(fontsize=9, loc="best", framealpha=0.9)
    return save(fig, path)
