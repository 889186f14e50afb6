"""The run folder: recipe.json, trials.md and trials.csv for one tuning."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from autotune.diagnosis.split import split_step
from autotune.errors import OptionsError
from autotune.report import summary, table
from autotune.report.plots import plot_progress, plot_split, plot_workers

if TYPE_CHECKING:
    from autotune.search.tuner import TuneResult


def new_run_dir(results_dir: Path, workload_name: str | None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", workload_name or "workload").strip("-") or "workload"
    base = Path(results_dir) / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
    run_dir, n = base, 1
    while run_dir.exists():
        n += 1
        run_dir = base.with_name(f"{base.name}-{n}")
    try:
        run_dir.mkdir(parents=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise OptionsError(f"results directory {results_dir} is not writable"
                           f" ({exc.strerror or exc}); pass --results-dir DIR") from None
    return run_dir


def write_plots(result: "TuneResult", plot_dir: Path) -> dict[str, Path]:
    bars = [(f"{name}\n{t.config.label()}", split_step(t.result))
            for name, t in (("PyTorch defaults", result.baseline), ("tuned", result.best)) if t.ok]
    target = result.context.target_rate
    return {
        "split": plot_split(bars, plot_dir / "step_split.png"),
        "workers": plot_workers(result.trials, result.best, plot_dir / "workers.png",
                                result.context.device_ceiling,
                                "target rate" if target else "device ceiling"),
        "progress": plot_progress(result.trials, result.baseline, plot_dir / "progress.png"),
    }


def write_run(result: "TuneResult", run_dir: Path) -> dict[str, Path]:
    table_rows = table.rows(result.trials, result.best, result.baseline)
    files = {
        "recipe": result.recipe.save(run_dir / "recipe.json"),
        "table_md": run_dir / "trials.md",
        "table_csv": run_dir / "trials.csv",
    }
    title = f"# autotune: {result.workload.name}\n\n"
    files["table_md"].write_text(title + table.to_markdown(table_rows))
    files["table_csv"].write_text(table.to_csv(table_rows))
    plots = write_plots(result, run_dir / "plots")
    files.update({f"plot_{name}": path for name, path in plots.items()})
    files["report"] = run_dir / "report.md"
    files["report"].write_text(summary.render(result, run_dir, plots))
    result.run_dir = run_dir
    result.files = files
    return files
