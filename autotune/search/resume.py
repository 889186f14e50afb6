"""Continuing an earlier tuning: `autotune tune WORKLOAD --resume RUN_DIR`.

The run folder names what to resume. Its study.journal holds every trial measured so far (each
persisted as it ended); the study goes on from there, configurations already measured are not
measured again, and the report in RUN_DIR is rewritten with old and new trials together. With
--storage/--study (a shared study) the study comes from there and RUN_DIR only gets the report.
The workload (and device) must be the ones the study was measured with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import optuna

from autotune.errors import OptionsError
from autotune.report.writer import STUDY_FILE, existing_run_dir
from autotune.search.options import TuneOptions
from autotune.search.study import STUDY_DEVICE, STUDY_WORKLOAD, make_storage


def resume_target(resume: Path, opts: TuneOptions) -> tuple[Path, TuneOptions]:
    """The run folder to continue in, and the options pointing at its study."""
    run_dir = existing_run_dir(resume)
    storage = opts.storage
    if storage is None:
        journal = run_dir / STUDY_FILE
        if not journal.is_file():
            raise OptionsError(f"--resume {resume}: no {STUDY_FILE} in it, so nothing to"
                               " continue (was it written by `autotune tune`?)")
        storage = str(journal)
    study_name = opts.study_name or only_study_name(storage, resume)
    if opts.storage is None:
        fail_abandoned(storage, study_name)
    return run_dir, opts.model_copy(update={"storage": storage, "study_name": study_name})


def only_study_name(storage: str, shown: Path) -> str:
    names = optuna.study.get_all_study_names(storage=make_storage(storage))
    if len(names) == 1:
        return names[0]
    if not names:
        raise OptionsError(f"--resume {shown}: its study storage holds no study to continue")
    raise OptionsError(f"--resume {shown}: its storage holds {len(names)} studies"
                       f" ({', '.join(sorted(names))}); pick one with --study")


def fail_abandoned(storage: str, study_name: str) -> None:
    """A run folder's own journal has one writer at a time, so a trial still running in it was
    cut off (its tuner was killed outright): mark it failed, so that its configuration counts
    as neither measured nor claimed and is measured again."""
    study = optuna.load_study(study_name=study_name, storage=make_storage(storage))
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        study.tell(trial.number, state=optuna.trial.TrialState.FAIL)


def _flat(workload: dict[str, Any], device: str) -> dict[str, Any]:
    """As the study stores it (JSON: tuples become lists), keyed so a mismatch can be named."""
    setup = {f"workload.{k}": v for k, v in workload.items()}
    setup["device"] = device
    return json.loads(json.dumps(setup, default=str))


def check_setup(study: optuna.Study, workload: dict[str, Any], device: str) -> None:
    """Trials are only comparable on one workload and device: refuse to continue a study that
    was measured on others."""
    if STUDY_WORKLOAD not in study.user_attrs:
        return
    stored = _flat(study.user_attrs[STUDY_WORKLOAD], study.user_attrs.get(STUDY_DEVICE, device))
    current = _flat(workload, device)
    for key in [*current, *(k for k in stored if k not in current)]:  # the workload name first
        if stored.get(key) != current.get(key):
            raise OptionsError(f"study '{study.study_name}' was measured with {key} {stored.get(key)},"
                               f" not {current.get(key)}: resume it with the same workload and options")
