"""The tuner: a facade over one optuna study, run as probe -> search -> confirm -> record ->
assemble.

Each step has its own module: setup.py (the probe batch, the space, the study), phases.py (the
phases), trial_runner.py (one configuration, one trial, told to the study), budget.py (the clock)
and assemble.py (the choice and the recipe). A study that already holds trials is continued,
not re-measured.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from typing import Callable

import optuna
import torch

from autotune import environment
from autotune.burst.ranks import RankGroup
from autotune.diagnosis import Context
from autotune.probe.ceilings import Ceilings
from autotune.search.assemble import assemble, pick
from autotune.search.budget import Budget
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.interrupt import StopRequested, StopSignals
from autotune.search.ledger import StudyLedger
from autotune.search.options import TuneOptions
from autotune.search.phases import (
    confirm,
    loader_ceiling_at,
    loader_probe_s,
    probe,
    search,
    stage_profile,
    stage_reserve,
)
from autotune.search.record import record
from autotune.search.result import TuneResult, TuningProgress
from autotune.search.search_range import SearchRange
from autotune.search.setup import batch_mib, build_space, probe_batch, tuning_study
from autotune.search.study import claim_lock, trials_of
from autotune.search.trial import TrialRecord
from autotune.search.trial_runner import Bursts, TrialRunner
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace
from autotune.transfer.device_loader import PhaseHook
from autotune.workload.accelerator import with_target_rate
from autotune.workload.base import Workload
from autotune.workload.device import device_for


class Tuner:
    """One tuning of `workload`. The sampler and the pruner default to a seeded TPE sampler and
    BehindBestPruner; `ranks` and `marks` go to every burst, `on_trial` gets each trial's
    progress."""

    def __init__(
        self,
        workload: Workload,
        options: TuneOptions,
        on_trial: Callable[[TuningProgress], None] | None = None,
        ranks: RankGroup | None = None,
        marks: PhaseHook | None = None,
        stop: StopSignals | None = None,
        sampler: optuna.samplers.BaseSampler | None = None,
        pruner: optuna.pruners.BasePruner | None = None,
    ):
        budget = Budget(options.budget_s)  # covers the probes and study set-up too
        if options.stages:
            budget.hold(stage_reserve(options.budget_s))
        if options.target_rate is not None:
            workload = with_target_rate(workload, options.target_rate)
        self.workload, self.options, self.stop = workload, options, stop or StopSignals()
        device = device_for(workload.device, options.device)
        cpus = usable_cpus(ranks=options.ranks_per_node).count
        with self.stop.interruptible():
            self.batch = probe_batch(workload, options.burst.time_limit)  # kept for the probes
        # The worker range holds the space's top (search_range.py): `space` reads it there.
        self.workers = SearchRange.of(
            build_space(self.batch, device, options.max_workers, cpus, options.knobs),
            cpus,
            options.max_workers,
        )
        guard = MemoryGuard(
            options.ram_budget_mib or default_ram_budget_mib(), batch_mib(self.batch)
        )
        self.study = tuning_study(options, workload.describe(), str(device), sampler, pruner)
        self.ledger = StudyLedger(self.study, claim_lock(options.storage))
        # Resuming: the trials measured before count as this tuning's own (numbering, --trials).
        # The ledger keeps any configuration the study knows from being measured again.
        trials = trials_of(self.study) if options.resume is not None else []
        budget.count(trials)
        self.bursts = Bursts(workload, device, options.burst, cpus, marks, ranks)
        self.runner = TrialRunner(
            self.study,
            self.bursts,
            guard,
            budget,
            self.stop,
            self.workers.in_context(Context(usable_cpus=cpus, target_rate=options.target_rate)),
            # Collected now, inside the budget: the first collection imports torchvision (seconds).
            origin=environment.collect(device, ranks=options.ranks_per_node),
            trials=trials,
            on_trial=on_trial,
            shared=options.study_name is not None,
        )
        self.stop_reason = ""  # why the search phase ended

    @property
    def space(self) -> SearchSpace:
        return self.workers.space

    @property
    def device(self) -> torch.device:
        return self.bursts.device

    @property
    def ranks(self) -> RankGroup | None:
        return self.bursts.ranks

    @ranks.setter
    def ranks(self, ranks: RankGroup | None) -> None:  # helper ranks start once the device is known
        self.bursts.ranks = ranks

    @property
    def trials(self) -> list[TrialRecord]:
        return self.runner.trials

    def run(self) -> TuneResult:
        try:
            ceilings = self._probe()
        except StopRequested:
            self.stop_reason = f"stopped by {self.stop.name}"
        else:
            self.runner.learn(ceilings)
            self._search(ceilings)
            confirm(self.runner, self.space)
            chosen = pick(self.runner.all_trials()).choice
            if chosen is not None:
                config = chosen.chosen.config
                record(
                    self.runner,
                    config,
                    chosen.record_noise_cv,
                    after_s=loader_probe_s(ceilings, config),
                )
        return self._result()

    def _probe(self) -> Ceilings | None:
        batch, self.batch = self.batch, None  # a batch can be large: not held through the search
        return probe(self.runner, batch, self.space)

    def _search(self, ceilings: Ceilings | None) -> None:
        self.stop_reason = search(
            self.runner,
            self.ledger,
            self.workers,
            ceilings,
            self.options.max_trials,
            self.options.early_stop,
        )
        self.runner.context = replace(
            self.workers.in_context(self.runner.context), range_stop=self.workers.stop
        )

    def _result(self) -> TuneResult:
        runner, ceilings = self.runner, self.runner.ceilings
        outcome = pick(runner.all_trials())
        if ceilings is not None and outcome.choice is not None:
            with suppress(StopRequested):  # the report of what was measured comes first
                loader_ceiling_at(runner, ceilings, outcome.choice.chosen.config)
        stages = None
        if self.options.stages and outcome.choice is not None:
            stages = stage_profile(runner, outcome.choice.chosen.config)
        elapsed = runner.budget.elapsed()
        assemble(
            outcome,
            runner.context,
            workload=self.workload.describe(),
            device=self.device,
            ceilings=ceilings,
            stages=stages,
            tuning_s=round(elapsed, 1),
            target_rate_samples_per_s=self.options.target_rate,
            ram_budget_mib=round(runner.guard.budget_mib, 1),
            stop_reason=self.stop_reason,
            not_searched=self.space.left_out() or None,
            max_workers_searched=self.space.max_workers,
            worker_range_grown_from=self.workers.grown_from,
            worker_range_stop=self.workers.stop,
        )
        assert outcome.context is not None  # assemble sets it
        return TuneResult(
            outcome.recipe,
            outcome.trials,
            outcome.best,
            outcome.baseline,
            self.workload,
            self.device,
            elapsed,
            outcome.context,
            interrupted=self.stop.name or None,
            ceilings=ceilings,
            choice=outcome.choice,
            stop_reason=self.stop_reason,
            stages=stages,
        )
