"""One configuration in, one TrialRecord out, told to the study as it ends.

Every outcome reaches the study from here, through one table (STATE_OF): `tell` closes the
search's trials, `keep_remeasurement` adds re-measurements. So the sampler and the pruner always
read an outcome the same way: a configuration that ran is complete with its rate and its RAM
constraint (rejected ones included: the sampler learns where memory runs out), one skipped or
pruned is pruned (the sampler learns to avoid the region), a failed one failed. A stop signal
cuts a burst short without a record: the trial is told failed, so a resume measures it again.
A failing configuration fails its trial, not the run (search/guard.py skips what cannot fit).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable

import optuna
import torch

from autotune.burst.failure import describe_failure, failure_traceback
from autotune.burst.ranks import RankGroup
from autotune.burst.result import BurstResult
from autotune.burst.runner import ProgressHook, run_burst
from autotune.decision.epoch_time import window_rules_out
from autotune.diagnosis import Context, diagnose
from autotune.diagnosis.evidence import KnownCeilings
from autotune.errors import AutotuneError
from autotune.probe.ceilings import Ceilings
from autotune.search.budget import Budget
from autotune.search.choose import group, noise_cv, pick_best
from autotune.search.guard import MemoryGuard
from autotune.search.interrupt import StopRequested, StopSignals
from autotune.search.options import BurstOptions
from autotune.search.pruning import PruneHook, Reach, reach_margin
from autotune.search.result import TuningProgress
from autotune.search.study import add_remeasurement, record, trials_of
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import tree_memory_mib
from autotune.telemetry.nvml import NvmlSampler
from autotune.transfer.device_loader import PhaseHook
from autotune.workload.base import Workload

State = optuna.trial.TrialState
STATE_OF = {
    TrialStatus.OK: State.COMPLETE,
    TrialStatus.REJECTED: State.COMPLETE,
    TrialStatus.SKIPPED: State.PRUNED,
    TrialStatus.PRUNED: State.PRUNED,
    TrialStatus.FAILED: State.FAIL,
}


def tell(
    study: optuna.Study, trial: optuna.Trial, done: TrialRecord, over_mib: float | None = None
) -> None:
    """Close `trial` with `done`'s outcome (`over_mib`: its peak over the RAM budget)."""
    state = STATE_OF[done.status]
    record(trial, done)
    value = None
    if state == State.COMPLETE:  # ok or rejected: a burst ran
        value = done.rate
        if over_mib is not None:
            trial.set_constraint("ram_mib", over_mib)  # feasible when <= 0
    study.tell(trial, value, state=state)


def abandon(study: optuna.Study, trial: optuna.Trial | int) -> None:
    """Close a trial not measured here (cut short, known already, or abandoned by a killed
    tuner): failed with no record, which samplers and the pruner ignore and the ledger counts as
    untaken."""
    study.tell(trial, None, state=State.FAIL)


def keep_remeasurement(study: optuna.Study, done: TrialRecord, over_mib: float | None) -> None:
    """A re-measurement has no optuna trial: it is added as a finished one of its own. Without
    params it teaches the sampler nothing, so one that ran no burst is simply failed."""
    state = STATE_OF[done.status] if done.result is not None else State.FAIL
    add_remeasurement(study, done, state, over_mib)


@dataclass
class Bursts:
    """How this tuning measures a configuration: one burst here, or on every rank at once."""

    workload: Workload
    device: torch.device
    options: BurstOptions
    cpus: int
    marks: PhaseHook | None = None
    ranks: RankGroup | None = None
    gpu_sampler: NvmlSampler | None = field(init=False)

    def __post_init__(self) -> None:
        self.gpu_sampler = (
            NvmlSampler.for_device(self.device.index or 0) if self.device.type == "cuda" else None
        )

    def measure(
        self,
        config: LoaderConfig,
        max_seconds: float | None = None,
        on_progress: ProgressHook | None = None,
        full_window: bool = False,
    ) -> BurstResult:
        settings = self.options.settings(max_seconds, full_window)
        local = partial(
            run_burst,
            self.workload,
            config,
            self.device,
            settings,
            usable_cpus=self.cpus,
            gpu_sampler=self.gpu_sampler,
            marks=self.marks,
            on_progress=on_progress,
        )
        return self.ranks.measure(config, settings, local) if self.ranks is not None else local()


@dataclass
class TrialRunner:
    study: optuna.Study
    bursts: Bursts
    guard: MemoryGuard
    budget: Budget
    stop: StopSignals
    context: Context  # for the trials' verdicts
    origin: dict[str, Any] | None = None  # where the trials are measured
    trials: list[TrialRecord] = field(default_factory=list)  # this tuning's, resumed ones first
    on_trial: Callable[[TuningProgress], None] | None = None
    shared: bool = False  # joining a named study: the result is every process's trials
    ceilings: Ceilings | None = None

    def learn(self, ceilings: Ceilings | None) -> None:
        """The probes' ceilings: the pruner's reach and the trials' verdicts use them."""
        self.ceilings = ceilings
        if ceilings is not None:
            self.context = replace(
                self.context,
                ceilings=KnownCeilings(device_samples_per_s=ceilings.device_samples_per_s),
                fetch=ceilings.fetch,
            )

    def all_trials(self) -> list[TrialRecord]:
        return trials_of(self.study) if self.shared else self.trials

    def run(
        self, config: LoaderConfig, phase: Phase, trial: optuna.Trial | None = None
    ) -> TrialRecord | None:
        """The trial (of the search when `trial` is given, a re-measurement otherwise): measured,
        failed, pruned, rejected or skipped; None if a stop signal cut its burst short."""
        made = partial(TrialRecord, len(self.trials), config, phase=phase, origin=self.origin)
        main_mib = tree_memory_mib()[1]
        reason = self.guard.skip_reason(config, main_mib=main_mib)
        if reason is not None:
            return self._keep(trial, made(TrialStatus.SKIPPED, error=reason))
        try:
            result = self._burst(config, trial, phase)
        except StopRequested:
            self._abandon(trial)
            return None
        except optuna.TrialPruned as exc:
            return self._keep(trial, made(TrialStatus.PRUNED, error=str(exc)))
        except AutotuneError:
            self._abandon(trial)
            raise
        except Exception as exc:  # one failing configuration fails one trial, not the run
            if self.stop.requested:  # e.g. workers ended by the same signal as this process
                self._abandon(trial)
                return None
            return self._keep(
                trial,
                made(
                    TrialStatus.FAILED,
                    error=describe_failure(exc),
                    traceback=failure_traceback(exc),
                ),
            )
        self.guard.observe(result, main_mib)
        rejection = self.guard.rejection(result)
        if rejection is not None:
            return self._keep(trial, made(TrialStatus.REJECTED, result=result, error=rejection))
        return self._keep(
            trial, made(TrialStatus.OK, result=result, diagnosis=diagnose(result, self.context))
        )

    def _burst(self, config: LoaderConfig, trial: optuna.Trial | None, phase: Phase) -> BurstResult:
        window_cap = self.budget.window_cap(self.bursts.options.min_seconds)
        # The record is the recipe's rate: its window runs to its longest, across the convoys of
        # a deep pool and the tail of slow items, not only until its two halves first agree.
        with self.stop.interruptible():
            return self.bursts.measure(
                config,
                max_seconds=window_cap,
                on_progress=self._prune_hook(trial, window_cap, config),
                full_window=phase == Phase.RECORD,
            )

    def _prune_hook(
        self, trial: optuna.Trial | None, window_cap: float, config: LoaderConfig
    ) -> PruneHook | None:
        # Ranks measure together: cutting rank 0's burst short would leave the others waiting.
        if trial is None or self.bursts.ranks is not None:
            return None
        trials = self.all_trials()  # a shared study's are read from its storage: once
        parts = (t.epoch_parts for t in trials if t.ok)
        if not window_rules_out(
            config.persistent_workers, config.num_workers, (p for p in parts if p is not None)
        ):
            return None
        window_s = self.bursts.options.settings(window_cap).max_seconds
        return PruneHook(trial, self._reach(window_s, trials))

    def _reach(self, window_s: float, trials: list[TrialRecord] | None = None) -> Reach | None:
        """No window runs faster than the device ceiling (once probed); the margin is the
        choice's tie band at the noise of the trials so far (`trials`, read where not given)."""
        if self.ceilings is None or self.ceilings.device_samples_per_s <= 0:
            return None
        margin = reach_margin(noise_cv(group(self.all_trials() if trials is None else trials)))
        return Reach(self.ceilings.device_samples_per_s, window_s, margin)

    def _abandon(self, trial: optuna.Trial | None) -> None:
        if trial is not None:
            abandon(self.study, trial)

    def _keep(self, trial: optuna.Trial | None, done: TrialRecord) -> TrialRecord:
        """Persist the trial in the study as it ends (nothing measured is lost to a crash): as
        `trial`'s outcome in the search, as a re-measurement of its own otherwise."""
        done.finished_s = self.budget.elapsed()
        over_mib = (
            done.result.host.peak_pss_mib - self.guard.budget_mib
            if done.result is not None
            else None
        )
        if trial is None:
            keep_remeasurement(self.study, done, over_mib)
        else:
            tell(self.study, trial, done, over_mib)
        self.trials.append(done)
        self.budget.count([done])
        if self.on_trial is not None:
            self.on_trial(self.progress(done))
        return done

    def progress(self, last: TrialRecord | None) -> TuningProgress:
        best = pick_best(self.trials)
        return TuningProgress(
            len(self.trials),
            self.budget.elapsed(),
            self.budget.budget_s,
            best.samples_per_s if best else None,
            last,
        )
