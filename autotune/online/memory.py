"""The online loader's side of the memory (autotune/memory): the key of a loader's workload on
this machine, the run started from what an earlier run of it measured, and what this run leaves
for the next one.

A remembered run is taken up where it stopped: its measurements go into the climb as they were
(configurations measured part-way, the start aside, are measured anew), and the remembered best
runs from step 0. Its first windows are a check: where they agree with the remembered rate, a
finished exploring stays finished and an unfinished one goes on, over the plan, measuring only
what was never measured; where they do not, exploring starts again (policy.py, HillClimb._checked).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from autotune.decision import drift
from autotune.decision.verdict import noise_cv
from autotune.environment import gpu_name
from autotune.memory import key as memory_key
from autotune.memory import store
from autotune.memory.record import Entry, Source, Windows
from autotune.online.climb_types import Check, Request, Reuse, StopReason, with_value
from autotune.online.measurement import Measurement
from autotune.online.policy import HillClimb
from autotune.online.workload import describe
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig

# Exploring these cut short is unfinished: the next run, with a bound and steps of its own, goes on
# from where it stopped. The horizon (EPOCH_END) counts every run's exploring, so it ends it.
CUT_SHORT = (StopReason.BOUND, StopReason.RUN_END)

# Measurement's fields kept in the memory (its open window is not: a window is one segment's).
KEPT = tuple(name for name in Windows.model_fields if name != "config")


def entry_key(workload: dict[str, Any], cuda: bool, ranks: int | None = None) -> dict[str, Any]:
    gpu = gpu_name(torch.device("cuda")) if cuda and torch.cuda.is_available() else None
    return {"workload": memory_key.workload(workload), "machine": memory_key.machine(gpu, ranks)}


@dataclass(frozen=True)
class Snapshot:
    """What a run measured, as the memory keeps it (made with each outcome: finish.py)."""

    start: LoaderConfig
    chosen: LoaderConfig
    finished: bool
    stop: str | None
    measured: tuple[Windows, ...]
    exploration_steps: int = 0
    exploration_cost_s: float = 0.0
    # The chosen configuration's windows after exploring (HillClimb.settled), still growing
    # while the run goes on: read where the memory is written (Memory.save), at exit the last time.
    settled: Measurement | None = None
    least_settled: int = 1  # the windows a settled rate needs (the climb's min_windows)
    # An earlier run's settled rate of the same choice still holds where this run has none of
    # its own yet: its check did not find a drift.
    keeps_settled: bool = False

    @property
    def settled_windows(self) -> Windows | None:
        m = self.settled
        return windows_of(m) if m is not None and m.n >= self.least_settled else None


def snapshot(climb: HillClimb, stop: str | None) -> Snapshot:
    """The climb now. A check still under way counts the remembered windows too, and a finished
    exploring it checks stays finished; one the bound or the run's end cut short is unfinished."""
    checking = climb.checking
    finished = (not climb.exploring and climb.stop_reason not in CUT_SHORT) or (
        checking and climb.reuse is not None and climb.reuse.finished
    )
    measured = tuple(
        windows_of(m, whole=checking and m is climb.best)
        for m in climb.measured.values()
        if not m.refused
    )
    chosen = climb.choice_so_far() if climb.exploring else climb.current
    return Snapshot(
        climb.start,
        chosen,
        finished,
        stop,
        measured,
        climb.prior_steps + climb.steps,
        climb.exploration_cost_s(),
        climb.settled,
        climb.settings.min_windows,
        climb.reuse is not None and climb.reuse.check is not Check.DRIFTED,
    )


def windows_of(m: Measurement, whole: bool = False) -> Windows:
    values = {name: getattr(m, name) for name in KEPT}
    if whole:
        values["fresh_from"] = 0
    return Windows(config=m.config.as_dict(), **values)


def measurement_of(w: Windows, config: LoaderConfig) -> Measurement:
    values = {name: getattr(w, name) for name in KEPT}
    if w.steady_unready_s is None:
        values["steady_unready_s"] = w.steady_wait_s
    m = Measurement(config, **values)
    m.rates, m.spans = list(w.rates), list(w.spans)
    m.fresh_from = min(m.fresh_from, len(m.rates))
    return m


@dataclass
class Memory:
    """One loader's entry: where it is, its key, what was read at the start, and this run's id
    (a run writes several times and counts once)."""

    folder: Path
    key: dict[str, Any]
    entry: Entry | None
    run_id: str

    @classmethod
    def open(
        cls,
        option: Path | bool | None,
        workload: dict[str, Any],
        cuda: bool,
        ranks: int | None,
        run_id: str,
    ) -> Memory | None:
        folder = store.where(option)
        if folder is None:
            return None
        key = entry_key(workload, cuda, ranks)
        return cls(folder, key, store.load(folder, key), run_id)

    def save(self, shot: Snapshot, name: str) -> None:
        chosen = shot.chosen.as_dict()

        def change(entry: Entry | None) -> Entry:
            runs = 0 if entry is None else entry.runs
            if entry is None or entry.last_run != self.run_id:
                runs += 1
            settled = shot.settled_windows
            if settled is None and shot.keeps_settled and entry is not None:
                settled = entry.settled if entry.chosen == chosen else None
            return Entry(
                key=self.key,
                source=Source.ONLINE,
                runs=runs,
                last_run=self.run_id,
                name=name,
                start=shot.start.as_dict(),
                chosen=chosen,
                exploring_finished=shot.finished,
                stop=shot.stop,
                measured=list(shot.measured),
                settled=settled,
                exploration_steps=shot.exploration_steps,
                exploration_cost_s=shot.exploration_cost_s,
            )

        store.update(self.folder, self.key, change)


def remember_recipe(
    loader: Any, recipe: Recipe, name: str, cuda: bool, option: Path | bool | None = None
) -> Path | None:
    """`autotune tune`'s recipe for the workload `loader` loads (a torch DataLoader over it),
    remembered: a training that follows starts at its configuration (restore). Where the memory
    already holds an online run of this workload, the loop's own measurements are kept."""
    folder = store.where(option)
    if folder is None:
        return None
    key = entry_key(describe(loader, name), cuda)
    chosen = recipe.config.as_dict()

    def change(entry: Entry | None) -> Entry | None:
        if entry is not None and entry.source is Source.ONLINE and entry.measured:
            return None
        return Entry(
            key=key,
            source=Source.TUNE,
            runs=0,
            name=name,
            chosen=chosen,
            exploring_finished=True,
            stop="autotune tune's recipe",
            measured=[Windows(config=chosen)],
            tuned_samples_per_s=recipe.measured.samples_per_s,
        )

    return store.path_of(folder, key) if store.update(folder, key, change) else None


def restore(climb: HillClimb, entry: Entry) -> bool:
    """Start `climb` from `entry`: its measurements in, its best running from step 0 under check.
    False (the climb untouched) where the entry has nothing this climb can start from."""
    if not climb.exploring or entry.chosen is None:
        return False

    def here(values: dict[str, Any]) -> LoaderConfig:
        """A remembered configuration as this loader runs it: the tuned knobs remembered, the
        others as the script gives them now."""
        remembered, out = LoaderConfig.from_params(values), climb.start
        for name in climb.tuned:
            out = with_value(out, name, getattr(remembered, name))
        return out

    chosen = here(entry.chosen)
    # A climb's start is measured in fewer windows than a candidate (START_WINDOWS; after a drift,
    # the configuration running is the new start), and the choice may be it: neither is partial.
    whole = {climb.start, *(here(entry.start) for _ in [0] if entry.start is not None)}
    measured: dict[LoaderConfig, Measurement] = {}
    for w in entry.measured:
        config = here(w.config)
        m = measurement_of(w, config)
        partial = 0 < m.n < climb.settings.min_windows and config not in whole
        if m.refused or (
            partial and replace(config, persistent_workers=chosen.persistent_workers) != chosen
        ):
            continue  # refused for the memory of that moment; or measured part-way: anew
        if config not in measured or m.n > measured[config].n:
            measured[config] = m
    best = measured.get(chosen) or next(  # persistence is decided after measuring
        (
            m
            for c, m in measured.items()
            if replace(c, persistent_workers=chosen.persistent_workers) == chosen
        ),
        None,
    )
    if best is None and entry.source is Source.TUNE:
        best = measured.setdefault(chosen, Measurement(chosen))
    if best is None or best.failed or not (best.n or entry.source is Source.TUNE):
        return False
    noise = noise_cv([m.pieces for m in measured.values()])
    online = entry.source is Source.ONLINE
    # The rate the check compares with: the choice's over the rest of the run that chose it,
    # where that run went on long enough (Entry.settled), else the windows it was chosen on.
    settled = _settled(entry, chosen, climb.settings.min_windows) if online else None
    rated = settled or best
    remembered = rated.mean if rated.n and online else None
    # Measured again after it was picked (after exploring, too), or checked by a later run (its
    # windows then scaled to that run's level), it carries no pick's bias.
    picked = remembered is not None and settled is None and best.fresh_from == 0
    picked = picked and not best.checked
    rivals = [m.pieces for m in measured.values() if m is not best and m.n and not m.failed]
    reuse = Reuse(
        run=entry.runs + 1,
        # The remembered choice, as this run starts it (persistence too: re-deciding it here,
        # before the epoch's length is known, would name a setting no run chose).
        label=chosen.label(),
        finished=entry.exploring_finished,
        measured=sum(1 for m in measured.values() if m.n),
        remembered_rate=remembered,
        remembered_n=rated.n,
        noise_cv=noise,
        source=str(entry.source),
        selection_bias=drift.selection_bias(noise, best.pieces, rivals) if picked else 0.0,
        remembered_steady=rated.steady_rate if remembered else None,
        remembered_startup_s=best.startup_s if remembered else None,
        settled_steps=settled.steady_steps if settled is not None else None,
    )
    _fresh_check(best)
    if not entry.exploring_finished:
        climb.prior_steps, climb.prior_cost_s = entry.exploration_steps, entry.exploration_cost_s
    climb.measured.update(measured)
    climb.best = best
    climb.current = best.config
    climb.cover(best.config)
    climb._request = Request(best.config, again=True)
    climb.reuse = reuse
    return True


def _settled(entry: Entry, chosen: LoaderConfig, least: int) -> Measurement | None:
    """The remembered choice's windows after exploring, where it has `least` of them and they
    are of the configuration this run starts."""
    w = entry.settled
    if w is None or len(w.rates) < least or w.config != entry.chosen:
        return None
    return measurement_of(w, chosen)


def _fresh_check(m: Measurement) -> None:
    """The check's windows are counted apart from the remembered ones, and its steps alone say
    how much the loop waits now."""
    m.remeasure()
    m.steady_steps, m.steady_s, m.steady_wait_s, m.steady_unready_s = 0, 0.0, 0.0, 0.0
    m.steady_wait_cpu_s = m.steady_work_cpu_s = 0.0


def _less_bias(r: Reuse) -> str:
    return f"less the {100 * r.selection_bias:.1f}% its pick among ties reads high"


def note(reuse: Reuse | None, batch_size: int) -> str | None:
    """What this run reused, for its report: run N of this workload here, started at what, how
    the check went."""
    if reuse is None:
        return None
    r = reuse
    where = f"run {r.run} of this workload here: started at {r.label}"
    base = "autotune tune's recipe, remembered" if r.source == Source.TUNE else "remembered"
    extra = "" if r.finished else f", {r.measured} configurations measured, exploring unfinished"
    origin = base + extra
    rate = "n/a" if r.rate is None else f"{r.rate * batch_size:.1f}"
    against = r.against or r.remembered_rate
    old = "n/a" if against is None else f"{against * batch_size:.1f}"
    if r.check is Check.CHECKING:
        return f"{where} ({origin}), checking it ({r.check_steps} steps so far)"
    if r.check is Check.DRIFTED:
        assert r.rate is not None and against is not None and r.band is not None
        drift = 100 * (r.rate / against - 1)
        seen = f"it ran at {rate} samples/s in its first {r.check_steps} steps"
        if r.slow_start and r.startup_s is not None and r.remembered_startup_s is not None:
            seen = (
                f"in its first {r.check_steps} steps its workers took {r.startup_s:.2f} s to"
                f" their first batch, against {r.remembered_startup_s:.2f} s remembered: its"
                f" first epoch at {rate} samples/s, against {old}"
            )
        elif r.remembered_steady is not None and against == r.remembered_steady:  # early read
            seen += f", against {old} over the remembered best's steady steps"
        elif r.selection_bias:
            seen += f", against {old} {_less_bias(r)}"
        kept = "n/a" if r.remembered_rate is None else f"{r.remembered_rate * batch_size:.1f}"
        kept += " samples/s"
        if r.settled_steps is not None:
            kept += f" over {r.settled_steps} steps after exploring"
        return (
            f"{where} ({base} at {kept}{extra}), but {seen} ({drift:+.0f}%, beyond the"
            f" {100 * r.band:.0f}% the noise and drift allow): exploring started again"
        )
    band = "" if r.band is None else f", within the {100 * r.band:.0f}% the noise and drift allow"
    if r.settled_steps is not None:
        old += f" over {r.settled_steps} steps after exploring"
    if r.selection_bias and r.remembered_rate is not None:
        old = f"{r.remembered_rate * batch_size:.1f}, {old} {_less_bias(r)}"
    checked = (
        f"measured in {r.check_steps} steps at {rate} samples/s"
        if r.check is Check.UNCHECKED
        else f"checked in {r.check_steps} steps ({rate} samples/s, remembered {old}{band})"
    )
    if r.finished:
        rest = "no exploring"
    elif r.bound_spent:
        rest = "no exploring: the earlier runs' exploring had lost all its bound allows"
    else:
        rest = "exploring went on from there"
    return f"{where} ({origin}), {checked}, {rest}"
