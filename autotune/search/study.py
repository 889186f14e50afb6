"""The optuna study behind the search: its storage, its sampler, and how trials are kept in it.

Each finished trial carries its whole measurement in the study (user attributes), so a study on
disk or shared between processes is enough to rebuild the table and the recipe.
"""

from __future__ import annotations

import warnings
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import BaseStorage, JournalStorage
from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

from autotune.burst.result import BurstResult
from autotune.search.trial import FAILED, OK, Trial
from autotune.space.config import LoaderConfig

RDB_SCHEMES = ("sqlite", "postgresql", "mysql", "oracle", "mssql")
ATTR_CONFIG, ATTR_RESULT, ATTR_ERROR, ATTR_NUMBER = "config", "result", "error", "autotune_trial"
ATTR_ORIGIN = "origin"
# Study-level attributes: what was tuned, so a report can rebuild the recipe from the study alone.
STUDY_WORKLOAD, STUDY_DEVICE = "workload", "device"


def _is_rdb_url(text: str) -> bool:
    return text.split(":", 1)[0].split("+", 1)[0] in RDB_SCHEMES and "://" in text


def _journal_path(target: str | Path) -> Path:
    path = Path(str(target)).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def make_storage(target: str | Path | None) -> BaseStorage | str | None:
    """None: in memory. An RDB URL (sqlite:///..., postgresql://...): optuna's RDB storage.
    Anything else is a file path for a journal: no database server needed, and with the
    open-file lock it is safe on network filesystems where SQLite is not."""
    if target is None:
        return None
    if _is_rdb_url(str(target)):
        return str(target)
    path = str(_journal_path(target))
    return JournalStorage(JournalFileBackend(path, lock_obj=JournalFileOpenLock(path)))


class _FileLock(AbstractContextManager[None]):
    """Reusable `with` form of optuna's open-file lock (O_EXCL create: safe on NFS)."""

    def __init__(self, path: str):
        self._lock = JournalFileOpenLock(path)

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def claim_lock(target: str | Path | None) -> AbstractContextManager[None]:
    """A lock shared by every process on the same journal file, for read-then-write steps on the
    study (is this configuration taken? then take it). The journal's own lock covers single
    writes only. An RDB storage or an in-memory study gets none: there such steps stay
    best-effort, and at worst one configuration is measured twice."""
    if target is None or _is_rdb_url(str(target)):
        return nullcontext()
    return _FileLock(str(_journal_path(target)) + ".claims")


def open_study(*, seed: int | None, storage: str | Path | None = None,
               study_name: str | None = None) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        # multivariate/group are marked experimental, and are what a conditional space needs.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=6, multivariate=True,
                                             group=True)
    return optuna.create_study(direction="maximize", sampler=sampler, storage=make_storage(storage),
                               study_name=study_name, load_if_exists=True)


def record(trial: optuna.Trial, record: Trial) -> None:
    """Attach what was measured to the optuna trial before it is told."""
    trial.set_user_attr(ATTR_CONFIG, record.config.as_dict())
    trial.set_user_attr(ATTR_NUMBER, record.number)
    if record.result is not None:
        trial.set_user_attr(ATTR_RESULT, record.result.to_dict())
    if record.error is not None:
        trial.set_user_attr(ATTR_ERROR, record.error)
    if record.origin is not None:
        trial.set_user_attr(ATTR_ORIGIN, record.origin)


def describe_study(study: optuna.Study, workload: dict[str, Any], device: str) -> None:
    """Note what the study tunes, once: a report rebuilds recipes from the study alone."""
    if STUDY_WORKLOAD not in study.user_attrs:
        study.set_user_attr(STUDY_WORKLOAD, workload)
        study.set_user_attr(STUDY_DEVICE, device)


def trials_of(study: optuna.Study) -> list[Trial]:
    """Measured trials kept in the study (repeats told from the cache carry no config)."""
    out: list[Trial] = []
    for frozen in study.get_trials(deepcopy=False):
        attrs: dict[str, Any] = frozen.user_attrs
        if ATTR_CONFIG not in attrs:
            continue
        config = LoaderConfig(**attrs[ATTR_CONFIG])
        result = BurstResult.from_dict(attrs[ATTR_RESULT]) if ATTR_RESULT in attrs else None
        status = OK if frozen.state == optuna.trial.TrialState.COMPLETE and result else FAILED
        out.append(Trial(len(out), config, status, result=result, error=attrs.get(ATTR_ERROR),
                         origin=attrs.get(ATTR_ORIGIN)))
    return out
