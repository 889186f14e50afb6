"""Cutting bursts that are clearly losing: an optuna pruner fed by the burst's progress hook.

The burst reports its running throughput every half second of its timed window. Two rules stop a
trial there instead of running its full window:
  behind   its rate so far is well below the best finished trial (the optuna pruner);
  out of reach  even if the rest of the window ran at the ceiling, the window's rate could not
           come within what the choice treats as equal to the best (a bound, not a guess: a
           window ends by its `max_seconds`, no stretch of it beats the ceiling, and a window
           that never steadies counts at no more than its whole-window rate).

"Equal to the best" is the choice's own tie band for two single bursts at the noise measured so
far (decision/rate.py `tolerance`), never below TARGET. The best finished trial is one burst,
often a lucky one: a fixed narrow margin against it cuts pools that the choice's band would have
tied with it (results/bench/deep-storage-noise, section 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import optuna
from optuna.trial import FrozenTrial, TrialState

from autotune.decision.rate import tolerance
from autotune.decision.thresholds import FALLEN, TARGET

# "Clearly losing": on a busy machine one configuration's bursts scatter widely, and a window's
# first second is rougher still, so only a rate below half the best is a safe call.
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
        best = best_finished(study)
        return best is not None and trial.intermediate_values[step] < self.ratio * best


def best_finished(study: optuna.Study) -> float | None:
    """The best rate among finished trials within the RAM budget."""
    finished = [
        t.value
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if t.value is not None and not any(v > 0 for v in t.constraints.values())
    ]
    return max(finished) if finished else None


# The ceilings are probed in short windows: a burst may read a little above them.
CEILING_MARGIN = 1.1


def reach_margin(noise_cv: float | None) -> float:
    """How far below the best finished trial a window may end and still be worth finishing: the
    choice's tie band for two single bursts at `noise_cv`, never below TARGET. Until anything was
    measured twice the noise is unknown, and FALLEN, one burst's noise on a busy machine, stands
    in."""
    return FALLEN if noise_cv is None else max(TARGET, tolerance(noise_cv, 1, 1))


@dataclass(frozen=True)
class Reach:
    """The most a window can still reach: it ends by `window_s`, and runs at most at `ceiling`.
    It is out of reach when that is more than `margin` below the best finished trial."""

    ceiling: float
    window_s: float
    margin: float

    def best_final(self, elapsed_s: float, rate: float) -> float:
        rest = max(0.0, self.window_s - elapsed_s)
        top = max(rate, CEILING_MARGIN * self.ceiling)
        return (rate * elapsed_s + top * rest) / max(self.window_s, elapsed_s)

    def out_of_reach(self, elapsed_s: float, rate: float, best: float) -> bool:
        return self.best_final(elapsed_s, rate) < (1 - self.margin) * best


class PruneHook:
    """The burst's on_progress hook: report the running rate, raise TrialPruned when told to."""

    def __init__(self, trial: optuna.Trial, reach: Reach | None = None):
        self.trial = trial
        self.reach = reach
        self.reports = 0
        self.last_rate = 0.0
        self.last_elapsed = 0.0

    def __call__(self, elapsed_s: float, samples_per_s: float) -> None:
        self.trial.report(samples_per_s, self.reports)
        self.reports += 1
        self.last_rate, self.last_elapsed = samples_per_s, elapsed_s
        if self.trial.should_prune():
            raise optuna.TrialPruned(
                f"{samples_per_s:.1f} samples/s after {elapsed_s:.1f}s of the"
                " window, clearly behind the best trial"
            )
        if self.reach is not None:
            best = best_finished(self.trial.study)
            if best is not None and self.reach.out_of_reach(elapsed_s, samples_per_s, best):
                raise optuna.TrialPruned(
                    f"{samples_per_s:.1f} samples/s after {elapsed_s:.1f}s of the window: even at"
                    f" the ceiling for the rest of it, it cannot come within"
                    f" {self.reach.margin:.1%} of the best trial"
                )
