"""The optuna study behind the search: its storage, its sampler, and how trials are kept in it.

Each finished trial carries its whole measurement in the study (user attributes), so a study on
disk or shared between processes is enough to rebuild the table and the recipe.
"""

from __future__ import annotations

import os
import warnings
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, BinaryIO, overload

import optuna
from optuna.storages import BaseStorage, JournalStorage
from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

from autotune.burst.result import BurstResult
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig

RDB_SCHEMES = ("sqlite", "postgresql", "mysql", "oracle", "mssql")
ATTR_CONFIG, ATTR_RESULT, ATTR_ERROR, ATTR_NUMBER = "config", "result", "error", "autotune_trial"
ATTR_ORIGIN, ATTR_STATUS, ATTR_TRACEBACK, ATTR_PHASE = "origin", "status", "traceback", "phase"
# Study-level attributes: what was tuned, so a report can rebuild the recipe from the study alone.
STUDY_WORKLOAD, STUDY_DEVICE = "workload", "device"
# Read backwards in blocks this size to find a journal's last complete line.
TAIL_BLOCK = 64 * 1024


def _is_rdb_url(text: str) -> bool:
    return text.split(":", 1)[0].split("+", 1)[0] in RDB_SCHEMES and "://" in text


def _journal_path(target: str | Path) -> Path:
    path = Path(str(target)).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _last_newline(f: BinaryIO, size: int) -> int:
    """Offset just past the last newline of the file (0 if it has none)."""
    end = size
    while end > 0:
        start = max(0, end - TAIL_BLOCK)
        f.seek(start)
        at = f.read(end - start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def repair_journal(path: Path, lock: JournalFileOpenLock) -> None:
    """Cut a partial last line, left by a process killed mid-append (SIGKILL, the OOM killer).
    optuna skips such a line while it is the last, but refuses the whole file once another line
    follows it: resuming would lose the study. Done under the journal's lock, so no live writer
    is mid-append."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    lock.acquire()
    try:
        with open(path, "rb+") as f:
            size = f.seek(0, os.SEEK_END)
            keep = _last_newline(f, size)
            if keep < size:
                f.truncate(keep)
    finally:
        lock.release()


@overload
def make_storage(target: None) -> None: ...
@overload
def make_storage(target: str | Path) -> BaseStorage | str: ...
def make_storage(target: str | Path | None) -> BaseStorage | str | None:
    """None: in memory. An RDB URL (sqlite:///..., postgresql://...): optuna's RDB storage.
    Anything else is a file path for a journal: no database server needed, and with the
    open-file lock it is safe on network filesystems where SQLite is not."""
    if target is None:
        return None
    if _is_rdb_url(str(target)):
        return str(target)
    path = _journal_path(target)
    lock = JournalFileOpenLock(str(path))
    repair_journal(path, lock)
    return JournalStorage(JournalFileBackend(str(path), lock_obj=lock))


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


def default_sampler(seed: int | None) -> optuna.samplers.BaseSampler:
    with warnings.catch_warnings():
        # multivariate/group are marked experimental, and are what a conditional space needs.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=6, multivariate=True, group=True
        )


def open_study(
    *,
    seed: int | None,
    storage: str | Path | None = None,
    study_name: str | None = None,
    sampler: optuna.samplers.BaseSampler | None = None,
    pruner: optuna.pruners.BasePruner | None = None,
) -> optuna.Study:
    """`sampler`: by default the seeded TPE sampler of `default_sampler`."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = sampler if sampler is not None else default_sampler(seed)
    return optuna.create_study(
        direction="maximize",
        sampler=sampler,
        pruner=pruner,
        storage=make_storage(storage),
        study_name=study_name,
        load_if_exists=True,
    )


def _attrs(record: TrialRecord) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        ATTR_CONFIG: record.config.as_dict(),
        ATTR_NUMBER: record.number,
        ATTR_STATUS: record.status,
        ATTR_PHASE: record.phase,
    }
    if record.result is not None:
        attrs[ATTR_RESULT] = record.result.to_dict()
    if record.error is not None:
        attrs[ATTR_ERROR] = record.error
    if record.traceback is not None:
        attrs[ATTR_TRACEBACK] = record.traceback
    if record.origin is not None:
        attrs[ATTR_ORIGIN] = record.origin
    return attrs


def record(trial: optuna.Trial, record: TrialRecord) -> None:
    """Attach what was measured to the optuna trial before it is told."""
    for key, value in _attrs(record).items():
        trial.set_user_attr(key, value)


def add_remeasurement(
    study: optuna.Study,
    record: TrialRecord,
    state: optuna.trial.TrialState,
    over_ram_mib: float | None,
) -> None:
    """A measurement of an already tried configuration, kept in the study as a finished trial of
    its own (without params: the sampler already knows the point), in `state`."""
    if state != optuna.trial.TrialState.COMPLETE:  # kept for the report, with no value
        study.add_trial(optuna.trial.create_trial(state=state, user_attrs=_attrs(record)))
        return
    study.add_trial(
        optuna.trial.create_trial(
            value=record.samples_per_s,
            user_attrs=_attrs(record),
            constraints={"ram_mib": over_ram_mib or 0.0},
        )
    )


def describe_study(study: optuna.Study, workload: dict[str, Any], device: str) -> None:
    """Note what the study tunes, once: a report rebuilds recipes from the study alone."""
    if STUDY_WORKLOAD not in study.user_attrs:
        study.set_user_attr(STUDY_WORKLOAD, workload)
        study.set_user_attr(STUDY_DEVICE, device)


def trials_of(study: optuna.Study) -> list[TrialRecord]:
    """Measured trials kept in the study (repeats told from the cache carry no config), in the
    order they ended: a study's own numbering is the order trials were asked for, and a seed
    enqueued early but measured late (or after a resume) would otherwise come first."""
    out: list[TrialRecord] = []
    finished = [
        (t.datetime_complete, t)
        for t in study.get_trials(deepcopy=False)
        if t.datetime_complete is not None
    ]
    for _, frozen in sorted(finished, key=lambda ended: ended[0]):
        attrs: dict[str, Any] = frozen.user_attrs
        if ATTR_CONFIG not in attrs:
            continue
        config = LoaderConfig(**attrs[ATTR_CONFIG])
        result = BurstResult.from_dict(attrs[ATTR_RESULT]) if ATTR_RESULT in attrs else None
        complete = frozen.state == optuna.trial.TrialState.COMPLETE and result
        status = TrialStatus(
            attrs.get(ATTR_STATUS) or (TrialStatus.OK if complete else TrialStatus.FAILED)
        )
        out.append(
            TrialRecord(
                len(out),
                config,
                status,
                result=result,
                error=attrs.get(ATTR_ERROR),
                traceback=attrs.get(ATTR_TRACEBACK),
                phase=Phase(attrs.get(ATTR_PHASE, Phase.SEARCH)),
                origin=attrs.get(ATTR_ORIGIN),
            )
        )
    return out
