"""The run folder of a tuning (results/runs/DATE-WORKLOAD): claimed before anything is measured,
so that an unwritable results directory fails at once and not after minutes of measuring, or
found again to continue in it.

`autotune tune WORKLOAD --resume RUN_DIR` continues an earlier tuning: the folder's study.journal
holds every trial measured so far (each persisted as it ended), the study goes on from there,
configurations already measured are not measured again, and the report in RUN_DIR is rewritten
with old and new trials together. With --storage/--study (a shared study) the study comes from
there and RUN_DIR only gets the report. The workload and device must be the study's own
(search/setup.py checks).
"""

from __future__ import annotations

from pathlib import Path

import optuna

from autotune.errors import OptionsError
from autotune.run_paths import check_writable, new_run_dir
from autotune.search.options import TuneOptions
from autotune.search.study import make_storage
from autotune.search.trial_runner import abandon

STUDY_FILE = "study.journal"


def existing_run_dir(path: Path) -> Path:
    """The run folder of an earlier tuning, to continue in."""
    run_dir = Path(path).expanduser()
    if not run_dir.is_dir():
        raise OptionsError(
            f"--resume {path}: no such run folder (give the folder `autotune tune`"
            " printed, e.g. results/runs/DATE-WORKLOAD)"
        )
    check_writable(run_dir, run_dir, "--resume")
    return run_dir


def claim(opts: TuneOptions, workload_name: str | None) -> tuple[Path | None, TuneOptions]:
    """The folder this tuning writes to (None: it writes nothing), and the options with its study
    storage: by default the folder's journal, so every trial is kept next to the report as it
    ends."""
    run_dir: Path | None
    if opts.resume is not None:
        run_dir, opts = resume_target(opts.resume, opts)
    else:
        run_dir = (
            new_run_dir(opts.results_dir, workload_name) if opts.results_dir is not None else None
        )
    if run_dir is not None and opts.storage is None:
        opts = opts.model_copy(update={"storage": str(run_dir / STUDY_FILE)})
    return run_dir, opts


def resume_target(resume: Path, opts: TuneOptions) -> tuple[Path, TuneOptions]:
    """The run folder to continue in, and the options pointing at its study."""
    run_dir = existing_run_dir(resume)
    storage = opts.storage
    if storage is None:
        journal = run_dir / STUDY_FILE
        if not journal.is_file():
            raise OptionsError(
                f"--resume {resume}: no {STUDY_FILE} in it, so nothing to"
                " continue (was it written by `autotune tune`?)"
            )
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
    raise OptionsError(
        f"--resume {shown}: its storage holds {len(names)} studies"
        f" ({', '.join(sorted(names))}); pick one with --study"
    )


def fail_abandoned(storage: str, study_name: str) -> None:
    """A run folder's own journal has one writer at a time, so a trial still running in it was
    cut off (its tuner was killed outright): mark it failed, so that its configuration counts
    as neither measured nor claimed and is measured again."""
    study = optuna.load_study(study_name=study_name, storage=make_storage(storage))
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        abandon(study, trial.number)
