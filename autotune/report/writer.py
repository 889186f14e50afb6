"""The report files of a tuning, written into its run folder (claimed by autotune/run_folder.py,
which also keeps the study.journal there): recipe.json, trials.md, trials.csv, report.md with its
plots, and failures.txt with the full traceback of each failed trial."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autotune.diagnosis.split import split_step
from autotune.report import summary, table
from autotune.report.plots import plot_progress, plot_split, plot_stages, plot_workers

if TYPE_CHECKING:
    from autotune.search.result import TuneResult

FAILURES_FILE = "failures.txt"


def write_plots(result: TuneResult, plot_dir: Path) -> dict[str, Path]:
    """The run folder's pictures, of a tuning that has a best trial (and so the defaults')."""
    best, baseline = result.best, result.baseline
    if best is None or baseline is None:
        raise ValueError("plots are drawn for a tuning with a best trial")
    bars = [
        (f"{name}\n{t.config.label()}", split_step(t.burst))
        for name, t in (("PyTorch defaults", result.baseline), ("tuned", result.best))
        if t is not None and t.ok
    ]
    target = result.context.target_rate
    stages = (
        {"stages": plot_stages(result.stages.table, plot_dir / "stages.png")}
        if result.stages is not None and result.stages.table is not None
        else {}
    )
    return {
        **stages,
        "split": plot_split(bars, plot_dir / "step_split.png"),
        "workers": plot_workers(
            result.trials,
            best,
            plot_dir / "workers.png",
            result.context.device_ceiling,
            "target rate" if target else "device ceiling",
            result.recipe.measured.samples_per_s if result.recipe else None,
        ),
        "progress": plot_progress(result.trials, baseline, plot_dir / "progress.png"),
    }


def _failures(result: TuneResult) -> str:
    parts = [
        f"## trial {t.number}: {t.config.label()}\n\n{t.traceback}\n"
        for t in result.trials
        if t.traceback
    ]
    return "\n".join(parts)


def write_run(result: TuneResult, run_dir: Path) -> dict[str, Path]:
    table_rows = table.rows(result.trials, result.best, result.baseline)
    files = {"table_md": run_dir / "trials.md", "table_csv": run_dir / "trials.csv"}
    if result.recipe is not None:
        files["recipe"] = result.recipe.save(run_dir / "recipe.json")
    title = f"# autotune: {result.workload.name}\n\n"
    if result.interrupted:
        title += (
            f"Interrupted by {result.interrupted} after {len(result.trials)} trials; continue"
            f" with the same command plus `--resume {run_dir}`.\n\n"
        )
    files["table_md"].write_text(title + table.to_markdown(table_rows))
    files["table_csv"].write_text(table.to_csv(table_rows))
    failures = _failures(result)
    if failures:
        files["failures"] = run_dir / FAILURES_FILE
        files["failures"].write_text(failures)
    if result.best is not None:  # the verdict and the pictures are about the tuned configuration
        plots = write_plots(result, run_dir / "plots")
        files.update({f"plot_{name}": path for name, path in plots.items()})
        files["report"] = run_dir / "report.md"
        files["report"].write_text(summary.render(result, run_dir, plots))
    result.run_dir = run_dir
    result.files = files
    return files
