"""What online tuning leaves behind: the recipe (the CLI's model), a one-line summary on the
"autotune" logger, and at exit the recipe and a short report in a run folder under results/."""

from __future__ import annotations

import atexit
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from autotune import environment
from autotune.errors import AutotuneError
from autotune.online.meter import Ledger
from autotune.online.measurement import Measurement
from autotune.online.policy import HillClimb
from autotune.recipe.model import Measured, Recipe
from autotune.space.config import LoaderConfig
from autotune.report.table import COLUMNS, to_markdown
from autotune.run_folder import new_run_dir

log = logging.getLogger("autotune")
# An online run folder's workload slug starts with this (`autotune run` finds them by it).
ONLINE_PREFIX = "online-"


def _rate(m: Measurement | None, batch_size: int) -> float | None:
    return None if m is None or not m.n else m.mean * batch_size


def measured_block(climb: HillClimb, ledger: Ledger, batch_size: int) -> Measured:
    """What the climb measured of the configuration it chose. Rates are samples/s over the steady
    windows; the baseline is the starting configuration's."""
    best = climb.best
    rate = _rate(best, batch_size) or 0.0
    base = _rate(climb.measured.get(climb.start), batch_size) or rate
    cost_s = ledger.cost_s(1 / best.mean if best.mean else None)
    cv = climb.noise_cv()
    return Measured(
        samples_per_s=round(rate, 2), baseline_samples_per_s=round(base, 2),
        speedup=round(rate / base, 3) if base else 1.0,
        data_wait_pct=None if best.wait_pct is None else round(best.wait_pct, 2),
        startup_s=None if best.startup_s is None else round(best.startup_s, 3),
        trials=len(climb.measured), measurements=best.n,
        noise_pct=None if cv is None else round(100 * cv, 2),
        exploration_steps=ledger.explore_steps, exploration_cost_s=round(cost_s, 3),
        exploration_cost_pct=round(100 * cost_s / ledger.explore_s, 2) if ledger.explore_s else 0.0,
        exploration_stop=str(climb.stop_reason), **range_fields(climb))


def range_fields(climb: HillClimb) -> dict[str, Any]:
    """The worker range the climb searched, where it tuned num_workers."""
    if "num_workers" not in climb.tuned:
        return {}
    r = climb.range
    return dict(max_workers_searched=r.top, worker_range_grown_from=r.grown_from,
                worker_range_stop=r.why_stopped(climb.best.config, climb.best.starved))


def summary(label: str, m: Measured, start_label: str) -> str:
    return (f"autotune.DataLoader chose {label}: {m.samples_per_s:.1f} samples/s,"
            f" {m.speedup:.2f}x over {start_label} as started; {m.trials} configurations in"
            f" {m.exploration_steps} steps, exploration cost {m.exploration_cost_s:.2f} s"
            f" ({m.exploration_cost_pct:.1f}% of its time); {m.exploration_stop}")


def report(climb: HillClimb, name: str, line: str, batch_size: int, range_note: str | None) -> str:
    """A short Markdown report: the summary line, the table of measured configurations, and the
    worker range's end."""
    rows = []
    base = _rate(climb.measured.get(climb.start), batch_size)
    for number, m in enumerate(climb.measured.values()):
        rate = _rate(m, batch_size)
        row: dict[str, Any] = dict.fromkeys(COLUMNS)
        row.update(trial=number, **m.config.as_dict(),
                   samples_per_s=None if rate is None else round(rate, 1),
                   speedup=None if rate is None or not base else round(rate / base, 2),
                   data_wait_pct=None if m.wait_pct is None else round(m.wait_pct, 1),
                   status="best" if m is climb.best else f"ok ({m.n} windows, {m.steps} steps)")
        rows.append(row)
    return (f"# Online tuning: {name}\n\n{line}\n\n"
            "Rates are the training loop's own: batches handed out per second of step time, over"
            " windows after each switch's start-up and buffered batches.\n\n" + to_markdown(rows)
            + (f"\n\n{range_note}\n" if range_note else ""))


@dataclass
class Outcome:
    """What tuning found, in the form it is logged, shown and written. The recipe is made when
    first asked for (loader.recipe, or at exit): its environment block imports torchvision,
    seconds that must not land in a training step."""

    config: LoaderConfig
    measured: Measured
    workload: dict[str, Any]
    device: torch.device
    line: str  # the one-line summary
    report: str
    _recipe: Recipe | None = None

    @classmethod
    def of(cls, climb: HillClimb, ledger: Ledger, workload: dict[str, Any], batch_size: int,
           device: torch.device) -> "Outcome":
        measured = measured_block(climb, ledger, batch_size)
        line = summary(climb.current.label(), measured, climb.start.label())
        return cls(climb.current, measured, workload, device, line,
                   report(climb, str(workload.get("name")), line, batch_size, measured.range_note()))

    def recipe(self) -> Recipe:
        if self._recipe is None:
            self._recipe = Recipe.from_config(self.config, measured=self.measured,
                                              workload=self.workload,
                                              environment=environment.collect(self.device))
        return self._recipe


@dataclass
class Outbox:
    """What is written at exit; filled in when tuning ends. Holds no loader, so that a loader
    dropped before exit still leaves its results."""

    results_dir: Path | None
    name: str
    outcome: Outcome | None = None
    written: Path | None = None
    _registered: bool = False

    def arm(self) -> None:
        if self.results_dir is not None and not self._registered:
            atexit.register(self.write)
            self._registered = True

    def write(self) -> Path | None:
        """The run folder with recipe.json and report.md; None when there is nothing to write."""
        if self.results_dir is None or self.outcome is None or self.written is not None:
            return None
        try:
            run_dir = new_run_dir(self.results_dir, f"{ONLINE_PREFIX}{self.name}")
        except AutotuneError as exc:
            log.warning("autotune.DataLoader could not write its results: %s", exc)
            return None
        self.outcome.recipe().save(run_dir / "recipe.json")
        (run_dir / "report.md").write_text(self.outcome.report)
        self.written = run_dir
        return run_dir
