"""The report's pictures, PNG through matplotlib's Agg renderer (headless)."""

from autotune.report.plots.progress import plot_progress
from autotune.report.plots.split import plot_split
from autotune.report.plots.stages import plot_stages
from autotune.report.plots.workers import plot_workers

__all__ = ["plot_progress", "plot_split", "plot_stages", "plot_workers"]
