"""Cutting bursts that are clearly losing: an optuna pruner fed by the burst's progress hook.

The burst reports its running throughput every half second of its timed window; a trial whose
rate stays well below the best finished trial is stopped there instead of running its full window.
"""

from __future__ import annotations

import optuna
from optuna.trial import FrozenTrial, TrialState

# "Clearly losing": on a busy machine one configuration's bursts scatter by 20% and more, and a
# window's first second is rougher still, so only a rate below half the best is a safe call.
BEHIND_RATIO = 0.5
MIN_REPORTS = 2  # at least a second of the window: the first half second is too jumpy to judge


class BehindBestPruner(optuna.pruners.BasePruner):
    def __init__(self, ratio: float = BEHIND_RATIO, min_reports: int = MIN_REPORTS):
        self.ratio = ratio
        self.min_reports = min_reports

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        step = trial.last_step
        if step is None or len(trial.intermediate_values) < self.min_reports:
            return False
        finished = [t.value for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                    if t.value is not None and not any(v > 0 for v in t.constraints.values())]
        if not finished:
            return False
        return trial.intermediate_values[step] < self.ratio * max(finished)


class PruneHook:
    """The burst's on_progress hook: report the running rate, raise TrialPruned when told to."""

    def __init__(self, trial: optuna.Trial):
        self.trial = trial
        self.reports = 0
        self.last_rate = 0.0
        self.last_elapsed = 0.0

    def __call__(self, elapsed_s: float, samples_per_s: float) -> None:
        self.trial.report(samples_per_s, self.reports)
        self.reports += 1
        self.last_rate, self.last_elapsed = samples_per_s, elapsed_s
        if self.trial.should_prune():
            raise optuna.TrialPruned(f"{samples_per_s:.1f} samples/s after {elapsed_s:.1f}s of the"
                                     " window, clearly behind the best trial")
