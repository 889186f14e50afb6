"""Merge what many processes wrote into a shared study (or a sweep of studies) into recipes.

A sweep's studies are NAME/POINT (see `sbatch.POINT_SEPARATOR`); the study NAME itself is the
search split across tasks. Each study rebuilds its trials from the storage alone (`trials_of`)
and is assembled as a tuning is (search/assemble.py); its recipe carries the environment of the
node where its best configuration was measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import optuna
import torch

from autotune.cluster.sbatch import POINT_SEPARATOR
from autotune.diagnosis import Context
from autotune.errors import OptionsError
from autotune.recipe.model import Recipe
from autotune.search.assemble import assemble, pick
from autotune.search.study import STUDY_DEVICE, STUDY_WORKLOAD, make_storage, trials_of
from autotune.search.trial import TrialRecord
from autotune.space.cpus import usable_cpus


def nodes_of(trials: list[TrialRecord]) -> list[str]:
    return sorted({str(t.origin.get("node")) for t in trials if t.origin})


@dataclass
class StudyReport:
    study: str
    point: str | None  # the sweep point (NAME/POINT), None for the study NAME itself
    trials: list[TrialRecord]
    best: TrialRecord | None  # None: every configuration failed
    baseline: TrialRecord | None
    recipe: Recipe | None

    @property
    def nodes(self) -> list[str]:
        return nodes_of(self.trials)


def sweep_studies(storage: str, name: str) -> list[str]:
    """NAME and its sweep points NAME/..., as kept in `storage`."""
    try:
        names = optuna.get_all_study_names(storage=make_storage(storage))
    except Exception as exc:  # unreadable file, unreachable database: the user's to fix
        raise OptionsError(f"cannot read the storage {storage}: {exc}") from None
    found = sorted(n for n in names if n == name or n.startswith(name + POINT_SEPARATOR))
    if not found:
        known = ", ".join(sorted(names)[:10]) or "none"
        raise OptionsError(f"no study {name!r} in {storage} (studies there: {known})")
    return found


def merge_context(best: TrialRecord | None) -> Context:
    """What the verdicts judge CPU use against: the usable CPUs recorded where the chosen
    configuration was measured (its trial's origin); failing that, this merging machine's."""
    recorded = (best.origin or {}).get("usable_cpus") if best is not None else None
    return Context(usable_cpus=recorded or usable_cpus().count)


def merge_study(storage: str, name: str, base: str | None = None) -> StudyReport:
    study = optuna.load_study(study_name=name, storage=make_storage(storage))
    trials = trials_of(study)
    point = name[len(base) + 1 :] if base is not None and name != base else None
    # Chosen and assembled as a tuning is: the cheapest configuration within noise of the fastest.
    outcome = pick(trials)
    workload: dict[str, Any] = study.user_attrs.get(STUDY_WORKLOAD, {"name": name})
    device = torch.device(study.user_attrs.get(STUDY_DEVICE, "cpu"))
    assemble(
        outcome,
        merge_context(outcome.best),
        workload=workload,
        device=device,
        where={"study": name, "measured_on_nodes": nodes_of(trials)},
    )
    return StudyReport(name, point, trials, outcome.best, outcome.baseline, outcome.recipe)


def merge(storage: str, name: str) -> list[StudyReport]:
    """One report per study of the sweep NAME (just one when there was no sweep)."""
    return [merge_study(storage, study, base=name) for study in sweep_studies(storage, name)]
