"""What online tuning leaves behind: the recipe (the CLI's model), a one-line summary for the user
(notice.py: when exploring ends, and at exit), and a short report, written into a run folder
under results/ as soon as exploring ends, checkpointed while it goes on, and rewritten at exit
or on SIGTERM (at_exit.py).
A run that ends while exploring leaves the best configuration measured so far, marked
`exploration incomplete`. A figure that was not measured is null (n/a), never 0 or 1.0x."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from autotune import environment
from autotune.online import at_exit
from autotune.online.measurement import Measurement
from autotune.online.memory import Memory, Snapshot, note, snapshot
from autotune.online.meter import Ledger
from autotune.online.notice import Moment, Notices, say
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.online.registry import registry
from autotune.recipe.measured import build_measured
from autotune.recipe.model import Measured, Recipe, shown, speedup_text
from autotune.run_paths import ONLINE_PREFIX, new_run_dir
from autotune.space.config import LoaderConfig
from autotune.wording import counted

log = logging.getLogger("autotune")
# What the loop measures of a configuration: its knobs, its rate and its wait (the offline table's
# copy, compute and GPU columns have nothing here).
ONLINE_COLUMNS = ("trial", *TUNED, "samples_per_s", "speedup", "data_wait_pct", "status")
RATES_NOTE = (
    "Rates are the training loop's own: batches handed out per second of step time, over"
    " windows after each switch's start-up and buffered batches."
)


TOGETHER = "Knobs judged together:"


def _rate(m: Measurement | None, batch_size: int) -> float | None:
    return None if m is None or m.shown_mean <= 0 else m.shown_mean * batch_size


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def measured_block(
    climb: HillClimb,
    ledger: Ledger,
    batch_size: int,
    config: LoaderConfig,
    stop: str,
    error: str | None = None,
    memory: str | None = None,
) -> Measured:
    """What the climb measured of `config` (the one chosen, the best so far, or the one running
    when tuning stopped). Rates are samples/s over the steady windows; the baseline is the
    starting configuration's."""
    m = climb.measured.get(config) or climb.measured.get(climb.best.config)
    rate = _rate(m, batch_size)
    base = _rate(climb.measured.get(climb.start), batch_size)
    cost_s = ledger.cost_s(batch_size / rate) if rate else None
    failed = {c.label(): f.failed for c, f in climb.measured.items() if f.failed}
    return build_measured(
        samples_per_s=rate,
        baseline_samples_per_s=base,
        noise_cv=climb.noise_cv(),
        data_wait_pct=None if m is None else m.wait_pct,
        startup_s=None if m is None else m.startup_s,
        trials=sum(not f.refused for f in climb.measured.values()),
        measurements=None if m is None else m.n,
        exploration_steps=ledger.explore_steps,
        exploration_cost_s=cost_s,
        exploration_cost_pct=(
            100 * cost_s / ledger.explore_s if cost_s is not None and ledger.explore_s else None
        ),
        exploration_stop=stop,
        exploration_complete=not climb.exploring,
        failed_configurations=failed or None,
        tuning_error=error,
        memory=memory,
        **range_fields(climb),
    )


def range_fields(climb: HillClimb) -> dict[str, Any]:
    """The worker range the climb searched, where it tuned num_workers."""
    if "num_workers" not in climb.tuned:
        return {}
    r = climb.range
    return dict(
        max_workers_searched=r.top,
        worker_range_grown_from=r.grown_from,
        worker_range_stop=r.why_stopped(
            climb.best.config.num_workers, climb.best.config.label(), climb.best.starved
        ),
    )


def summary(label: str, m: Measured, start_label: str) -> str:
    cost = (
        "n/a"
        if m.exploration_cost_s is None
        else f"{m.exploration_cost_s:.2f} s ({shown(m.exploration_cost_pct, '.1f')}% of its time)"
    )
    verb = (
        "chose"
        if m.exploration_complete is not False
        else "had not finished exploring; best so far"
    )
    tried = "n/a configurations" if m.trials is None else counted(m.trials, "configuration")
    line = (
        f"autotune.DataLoader {verb} {label}: {shown(m.samples_per_s, '.1f')} samples/s,"
        f" {speedup_text(m.speedup)} over {start_label} as started; {tried} in"
        f" {m.exploration_steps} steps, exploration cost {cost}; {m.exploration_stop}"
    )
    if m.failed_configurations:
        line += f"; failed: {', '.join(m.failed_configurations)}"
    if m.tuning_error:
        line += f"; tuning stopped after autotune's own error ({m.tuning_error})"
    if m.memory:
        line += f"; {m.memory}"
    return line


def _stalls(m: Measurement, alone: bool = False) -> str:
    """Windows left out as stalls (decision/verdict.py, Pieces.stalled), said where there were."""
    n = m.pieces.stalls
    if not n:
        return ""
    return (
        f" ({n} window{'s' * (n > 1)} stalled, not counted)"
        if alone
        else f" and {n} stalled, not counted"
    )


def report(
    climb: HillClimb,
    name: str,
    line: str,
    batch_size: int,
    range_note: str | None,
    config: LoaderConfig,
) -> str:
    """A short Markdown report: the summary line, the table of measured configurations, the
    worker range's end, and the knobs judged together behind `config` (the choice)."""
    rows = []
    base = _rate(climb.measured.get(climb.start), batch_size)
    for number, m in enumerate(climb.measured.values()):
        rate = _rate(m, batch_size)
        status = (
            f"best{_stalls(m, alone=True)}"
            if m is climb.best and not m.failed
            else f"failed: {m.failed}"
            if m.failed
            else f"ok ({counted(m.n, 'window')}{_stalls(m)}, {m.steps} steps)"
        )
        row: dict[str, Any] = dict.fromkeys(ONLINE_COLUMNS)
        row.update(
            trial=number,
            **m.config.as_dict(),
            samples_per_s=_round(rate, 1),
            speedup=None if rate is None or not base else round(rate / base, 2),
            data_wait_pct=_round(m.wait_pct, 1),
            status=status,
        )
        rows.append(row)
    # These modules bring the diagnosis package: a rank imports them when its report is
    # written, not before its first batch.
    from autotune.online.interactions import lines
    from autotune.report.table import to_markdown

    together = lines(climb, config, batch_size)
    return (
        f"# Online tuning: {name}\n\n{line}\n\n{RATES_NOTE}\n\n"
        + to_markdown(rows, columns=ONLINE_COLUMNS)
        + (f"\n\n{range_note}\n" if range_note else "\n")
        + (f"\n{TOGETHER}\n\n" + "".join(f"- {x}\n" for x in together) if together else "")
    )


@dataclass
class Outcome:
    """What tuning found, in the form it is logged, shown and written."""

    config: LoaderConfig
    measured: Measured
    workload: dict[str, Any]
    device: torch.device
    line: str  # the one-line summary
    report: str
    snapshot: Snapshot | None = None  # what the memory keeps of it (a climb's outcome)
    _recipe: Recipe | None = None

    @classmethod
    def of(
        cls,
        climb: HillClimb,
        ledger: Ledger,
        workload: dict[str, Any],
        batch_size: int,
        device: torch.device,
        *,
        running: LoaderConfig | None = None,
        error: str | None = None,
    ) -> Outcome:
        """The climb's choice; while it still explores, the best so far (`exploration
        incomplete`); after an error of autotune's own, `running`, the configuration the loader
        stays on."""
        if climb.exploring:
            config = climb.choice_so_far()
            stop = f"{climb.stop_reason or 'exploration incomplete'} ({ledger.explore_steps} steps)"
        else:
            config, stop = climb.current, str(climb.stop_reason)
        if climb.resumed_at:
            at = ", ".join(str(step) for step in climb.resumed_at)
            stop += f"; resumed at step {at} (the run outlived its horizon)"
        if climb.settings.total_steps is not None:
            stop += f"; a run of {climb.settings.total_steps} steps ({climb.settings.total_source})"
        if error is not None and running is not None:
            config = running
        measured = measured_block(
            climb, ledger, batch_size, config, stop, error, note(climb.reuse, batch_size)
        )
        line = summary(config.label(), measured, climb.start.label())
        return cls(
            config,
            measured,
            workload,
            device,
            line,
            report(
                climb, str(workload.get("name")), line, batch_size, measured.range_note(), config
            ),
            snapshot(climb, stop),
        )

    @classmethod
    def untuned(
        cls,
        config: LoaderConfig,
        why: str,
        ledger: Ledger,
        workload: dict[str, Any],
        batch_size: int,
        device: torch.device,
        error: str | None = None,
    ) -> Outcome:
        """A loader that ran one configuration (an evaluation loader, or tuning that failed before
        it measured anything): its own rate in the loop, where it ran steps."""
        rate = (
            (ledger.tuned_steps + ledger.explore_steps)
            * batch_size
            / (ledger.tuned_s + ledger.explore_s)
            if ledger.tuned_s + ledger.explore_s > 0
            else None
        )
        measured = build_measured(
            samples_per_s=rate,
            baseline_samples_per_s=None,
            exploration_steps=0,
            exploration_stop=why,
            exploration_complete=None,
            tuning_error=error,
        )
        line = (
            f"autotune.DataLoader ran {config.label()}: {shown(rate, '.1f')} samples/s in the"
            f" loop; {why}" + (f" (autotune's own error: {error})" if error else "")
        )
        text = (
            f"# Online tuning: {workload.get('name')}\n\n{line}\n\nThe rate is the training"
            " loop's own: batches handed out per second of step time, every step counted.\n"
        )
        return cls(config, measured, workload, device, line, text)

    def recipe(self, ranks: int | None = None) -> Recipe:
        """The recipe; `ranks`: the ranks per node it was measured under, where the launcher's
        variables do not say (mp.spawn, Lightning)."""
        if self._recipe is None:
            self._recipe = Recipe.from_config(
                self.config,
                measured=self.measured,
                workload=self.workload,
                environment=environment.collect(self.device, ranks=ranks),
            )
        return self._recipe


@dataclass
class Outbox:
    """Where a loader's results go. Holds no loader, so that a loader dropped before exit still
    leaves its results. `interim` makes the outcome of a run still exploring; one run folder per
    loader, rewritten as the outcome changes: a loader dropped while exploring leaves its last
    checkpoint."""

    results_dir: Path | None
    name: str
    outcome: Outcome | None = None
    # Gives the maker of an interim outcome, or None once its loader is gone (a weak method).
    interim: Callable[[], Callable[[], Outcome | None] | None] | None = None
    written: Path | None = None
    ranks: int | None = None  # ranks per node, as the loader found them (ranks.py)
    notices: Notices = Notices.ALL
    memory: Memory | None = None  # where the run is remembered (memory.py); None: it is not
    _written_outcome: Outcome | None = field(default=None, repr=False)
    # The outcome last remembered, and its settled windows then (they grow after it is made).
    _remembered: tuple[Outcome, int] | None = field(default=None, repr=False)

    def arm(self) -> None:
        if self.results_dir is not None or self.memory is not None:
            at_exit.register(self)

    def publish(self, outcome: Outcome) -> None:
        """The final outcome: written and told now, not only at exit."""
        self.outcome = outcome
        say(self._with_report(outcome.line, self.write()), self.notices, Moment.SETTLED)

    def at_exit(self) -> None:
        """Written again, and told once more: the final line, with where its report is."""
        run_dir = self.write()
        if run_dir is not None and self._written_outcome is not None:
            line = self._written_outcome.line.replace(
                "autotune.DataLoader", "autotune.DataLoader (at exit)", 1
            )
            say(self._with_report(line, run_dir), self.notices, Moment.EXIT)

    @staticmethod
    def _with_report(line: str, run_dir: Path | None) -> str:
        return line if run_dir is None else f"{line}; report: {run_dir / 'report.md'}"

    def write(self) -> Path | None:
        """The run folder with recipe.json and report.md; None when there is nothing to write.
        Never raises: a results folder that cannot be written is one warning."""
        if self.results_dir is None and self.memory is None:
            return None
        try:
            make = self.interim() if self.interim is not None else None
            outcome = self.outcome or (make() if make is not None else None)
            if outcome is None:
                return None
            self._remember(outcome)
            if self.results_dir is None:
                return None
            if outcome is self._written_outcome:
                return self.written
            folders, key = registry().folders, (str(self.results_dir), self.name)
            run_dir = (
                self.written
                or folders.get(key)
                or new_run_dir(self.results_dir, f"{ONLINE_PREFIX}{self.name}")
            )
            folders[key] = run_dir
            outcome.recipe(self.ranks).save(run_dir / "recipe.json")
            (run_dir / "report.md").write_text(outcome.report)
        except Exception as exc:  # noqa: BLE001 - results are never worth a training run
            log.warning(
                "autotune.DataLoader could not write its results for %s: %s", self.name, exc
            )
            return None
        self.written, self._written_outcome = run_dir, outcome
        return run_dir

    def _remember(self, outcome: Outcome) -> None:
        """The memory keeps what the outcome's climb measured (store.py never raises)."""
        if self.memory is None or outcome.snapshot is None:
            return
        settled = outcome.snapshot.settled
        now = (outcome, 0 if settled is None else settled.n)
        last = self._remembered
        if last is None or last[0] is not outcome or last[1] != now[1]:
            self.memory.save(outcome.snapshot, self.name)
            self._remembered = now
