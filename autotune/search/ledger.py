"""What a study shared by several processes already knows, so none measures a configuration twice.

Before measuring, a process settles its configuration against the whole study: measured or
failed by anyone, it reuses the known outcome; claimed by another process still measuring it, it
leaves it alone; otherwise it claims it (a user attribute on its running trial). Look-up and claim
happen under the study's claim lock, so on a journal file two processes cannot take the same point.
Where a sampler keeps proposing taken points, the search goes on from a point nobody has taken
(`enqueue_untaken`), so a process stops for want of points only once the study holds them all.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import optuna

from autotune.search.study import ATTR_CONFIG
from autotune.space.config import LoaderConfig

ATTR_CLAIM = "claimed"
TrialState = optuna.trial.TrialState


@dataclass(frozen=True)
class Known:
    """The study's outcome for a configuration this process will not measure."""

    value: float | None  # samples/s; None when it failed or is still being measured elsewhere
    busy: bool = False  # another process is measuring it right now


def _config(attrs: dict[str, Any], key: str) -> LoaderConfig | None:
    return LoaderConfig(**attrs[key]) if key in attrs else None


def _taken(trial: optuna.trial.FrozenTrial) -> LoaderConfig | None:
    """The configuration `trial` measured (finished) or is measuring (claimed, running)."""
    if trial.state.is_finished():
        return _config(trial.user_attrs, ATTR_CONFIG)
    return _config(trial.user_attrs, ATTR_CLAIM) if trial.state == TrialState.RUNNING else None


def _queued(trials: list[optuna.trial.FrozenTrial], state: TrialState) -> list[dict[str, Any]]:
    """The params enqueued for the trials in `state` (waiting: not handed out yet)."""
    return [
        t.system_attrs["fixed_params"]
        for t in trials
        if t.state == state and "fixed_params" in t.system_attrs
    ]


class StudyLedger:
    def __init__(self, study: optuna.Study, lock: AbstractContextManager[None]):
        self.study = study
        self.lock = lock

    def enqueue_once(self, params: dict[str, Any]) -> bool:
        """Enqueue a trial unless the study already has it waiting, being measured or measured
        (PyTorch's defaults: once per study); whether it was enqueued. One asked but never
        measured, because its tuning was interrupted during that burst, does not count: it is
        enqueued again."""
        with self.lock:
            for other in self.study.get_trials(deepcopy=False):
                if other.system_attrs.get("fixed_params") != params:
                    continue
                if (
                    other.state in (TrialState.WAITING, TrialState.RUNNING)
                    or ATTR_CONFIG in other.user_attrs
                ):
                    return False
            self.study.enqueue_trial(params)
            return True

    def waiting(self) -> bool:
        """Whether an enqueued trial waits to be handed out."""
        return any(t.state == TrialState.WAITING for t in self.study.get_trials(deepcopy=False))

    def settle(self, trial: optuna.Trial, config: LoaderConfig) -> Known | None:
        """What the study knows of `config`; None when `trial` has claimed it and must measure
        it."""
        with self.lock:
            for other in self.study.get_trials(deepcopy=False):
                if other.number == trial.number or _taken(other) != config:
                    continue
                if other.state == TrialState.RUNNING:
                    return Known(None, busy=True)
                return Known(other.value if other.state == TrialState.COMPLETE else None)
            trial.set_user_attr(ATTR_CLAIM, config.as_dict())
        return None

    def enqueue_untaken(
        self, candidates: Iterable[LoaderConfig], params: Callable[[LoaderConfig], dict[str, Any]]
    ) -> LoaderConfig | None:
        """Enqueue the first of `candidates` no trial has measured, claimed or been handed (one
        already waiting is left in the queue: the next ask gets it). None when all are taken."""
        with self.lock:
            trials = self.study.get_trials(deepcopy=False)
            taken = {_taken(t) for t in trials}
            handed, waiting = (
                _queued(trials, TrialState.RUNNING),
                _queued(trials, TrialState.WAITING),
            )
            for config in candidates:
                wanted = params(config)
                if config in taken or wanted in handed:
                    continue
                if wanted not in waiting:
                    self.study.enqueue_trial(wanted)
                return config
        return None
