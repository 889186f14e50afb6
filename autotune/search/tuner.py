"""The tuning loop: ask the study for a configuration, run a burst, tell the study, repeat.

A failing configuration fails one trial, not the run; one that cannot fit in memory is skipped
before it runs (guard.py); a stop signal ends the current burst and keeps what was measured
(interrupt.py); a study that already holds trials is continued, not re-measured (resume.py).
"""

from __future__ import annotations

import os
import statistics
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import optuna
import torch
from torch.utils.data import DataLoader

from autotune import environment
from autotune.burst.failure import describe_failure, failure_traceback
from autotune.burst.result import BurstResult
from autotune.burst.runner import run_burst
from autotune.burst.watchdog import time_limit
from autotune.cluster.ledger import Known, StudyLedger
from autotune.cluster.ranks import RankGroup, WorkloadFactory
from autotune.cluster.slurm_env import process_slot
from autotune.diagnosis import Context, diagnose, explain
from autotune.errors import AutotuneError, OptionsError, WorkloadError
from autotune.profiling.nvtx import NvtxCost, fetch_ranges, load_nvtx, nvtx_phases, range_cost
from autotune.profiling.trace import TraceRecord, record_trace
from autotune.recipe.build import build_recipe
from autotune.recipe.model import Recipe
from autotune.search.choose import find_baseline, pick_best
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.interrupt import StopRequested, StopSignals, TuningInterrupted
from autotune.search.options import TuneOptions
from autotune.search.resume import check_setup, resume_target
from autotune.search.study import claim_lock, describe_study, open_study, record, trials_of
from autotune.search.trial import FAILED, OK, SKIPPED, Trial
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace, max_workers_for
from autotune.telemetry.host import MIB, tree_memory_mib
from autotune.telemetry.nvml import NvmlSampler
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import is_image_batch, iter_tensors
from autotune.workload.accelerator import with_target_rate
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device

# Stop asking once the sampler keeps proposing points already measured: the space is covered.
MAX_REPEATS_IN_A_ROW = 30
# This many failed bursts and not one success, PyTorch's defaults among them: the workload
# itself is broken, and spending the rest of the budget would only repeat the error.
BROKEN_AFTER_FAILURES = 3


@dataclass
class Progress:
    done: int
    elapsed_s: float
    budget_s: float
    best_samples_per_s: float | None
    last: Trial | None = None


@dataclass
class TuneResult:
    """What a tuning measured. `recipe`, `best` and `baseline` are None only when nothing
    succeeded yet (a tuning interrupted early, or a broken workload)."""

    recipe: Recipe | None
    trials: list[Trial]
    best: Trial | None
    baseline: Trial | None
    workload: Workload
    device: torch.device
    elapsed_s: float
    context: Context
    interrupted: str | None = None  # the signal that stopped the tuning early
    run_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    trace: TraceRecord | None = None  # --trace
    nvtx: NvtxCost | None = None  # --nvtx: what one range costs here

    def _recipe(self) -> Recipe:
        if self.recipe is None:
            raise AutotuneError("no configuration was measured successfully: there is no recipe")
        return self.recipe

    def loader(self, **overrides: Any) -> DataLoader:
        """A DataLoader over the tuned workload's data with the recipe applied."""
        w = self.workload
        base = dict(shuffle=w.shuffle if w.sampler is None else False, sampler=w.sampler,
                    collate_fn=w.collate_fn, drop_last=w.drop_last)
        return self._recipe().dataloader(w.dataset, w.batch_size, **{**base, **overrides})

    def device_loader(self, **overrides: Any) -> DeviceLoader:
        """The tuned loader yielding device-ready batches (transfer knobs applied)."""
        return self._recipe().wrap(self.loader(**overrides), self.device)


def _pick_device(workload: Workload, requested: str) -> torch.device:
    if workload.device is None:
        return resolve_device(requested)
    if requested != "auto" and resolve_device(requested) != workload.device:
        raise OptionsError(f"--device {requested} differs from the device the workload's step was"
                           f" built for ({workload.device}); drop --device or rebuild the workload")
    return workload.device


def probe_batch(workload: Workload, limit_s: float | None = None) -> Any:
    """One batch through the plain loader: shows the input layout and the batch size in bytes.
    None if loading it fails or hangs: the trials then show how, and a workload that fails in
    every configuration is reported as broken with its traceback."""
    try:
        with time_limit(limit_s, "loading the probe batch"):
            return next(iter(workload.make_loader(PYTORCH_DEFAULTS)))
    except StopIteration:
        raise WorkloadError(f"workload '{workload.name}' yields no batch: the dataset is smaller"
                            " than one batch") from None
    except AutotuneError:
        raise
    except Exception:
        return None


def batch_mib(batch: Any) -> float:
    return sum(t.nbytes for t in iter_tensors(batch)) / MIB


def build_space(batch: Any, device: torch.device, max_workers: int | None,
                cpus: int | None = None) -> SearchSpace:
    first = next(iter_tensors(batch), None)
    cpus = usable_cpus().count if cpus is None else cpus
    cap = max_workers_for(cpus, **({"cap": max_workers} if max_workers else {}))
    return SearchSpace(max_workers=cap, cuda=device.type == "cuda",
                       channels_last_ok=first is not None and is_image_batch(first))


class Tuner:
    def __init__(self, workload: Workload, options: TuneOptions,
                 on_trial: Callable[[Progress], None] | None = None, ranks: RankGroup | None = None,
                 marks: PhaseHook | None = None, stop: StopSignals | None = None):
        self.t0 = time.perf_counter()  # the budget covers the probe batch and study set-up too
        if options.target_rate is not None:
            workload = with_target_rate(workload, options.target_rate)
        self.workload = workload
        self.options = options
        self.on_trial = on_trial
        self.marks = marks
        self.stop = stop or StopSignals()
        self.device = _pick_device(workload, options.device)
        self.cpus = usable_cpus(ranks=options.ranks_per_node).count
        with self.stop.interruptible():
            batch = probe_batch(workload, options.burst.time_limit)
        self.space = build_space(batch, self.device, options.max_workers, self.cpus)
        self.context = Context(usable_cpus=self.cpus, max_workers=self.space.max_workers,
                               target_rate=options.target_rate)
        self.guard = MemoryGuard(options.ram_budget_mib or default_ram_budget_mib(),
                                 batch_mib(batch))
        del batch
        seed = options.seed
        if options.study_name is not None and seed is not None:
            # Processes joining one study must not all propose the same points in the same order.
            seed += process_slot(os.environ)
        self.study = open_study(seed=seed, storage=options.storage, study_name=options.study_name)
        if options.resume is not None:
            check_setup(self.study, workload.describe(), str(self.device))
        describe_study(self.study, workload.describe(), str(self.device))
        self.ledger = StudyLedger(self.study, claim_lock(options.storage))
        self.origin = environment.collect(self.device, ranks=options.ranks_per_node)
        self.ranks = ranks
        self.gpu_sampler = (NvmlSampler.for_device(self.device.index or 0)
                            if self.device.type == "cuda" else None)
        # Resuming: the trials measured before count as this tuning's own (numbering, --trials).
        # The ledger keeps any configuration the study knows from being measured again.
        self.trials: list[Trial] = trials_of(self.study) if options.resume is not None else []

    def measure(self, config: LoaderConfig, max_seconds: float | None = None) -> BurstResult:
        settings = self.options.burst.settings(max_seconds)
        local = partial(run_burst, self.workload, config, self.device, settings,
                        usable_cpus=self.cpus, gpu_sampler=self.gpu_sampler, marks=self.marks)
        return self.ranks.measure(config, settings, local) if self.ranks is not None else local()

    def _elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def _time_left(self) -> float:
        return self.options.budget_s - self._elapsed()

    def _measured(self) -> list[Trial]:
        return [t for t in self.trials if t.measured]

    def _next_burst_estimate(self) -> float:
        durations = [t.result.duration_s for t in self.trials if t.ok]
        return statistics.median(durations) if durations else 0.0

    def broken(self) -> bool:
        """Failed again and again, PyTorch's defaults included, and never once succeeded."""
        measured = self._measured()
        return (len(measured) >= BROKEN_AFTER_FAILURES and not any(t.ok for t in measured)
                and any(t.config == PYTORCH_DEFAULTS for t in measured))

    def _should_stop(self) -> bool:
        if self.stop.requested or self.broken():
            return True
        if self.options.max_trials is not None and len(self._measured()) >= self.options.max_trials:
            return True
        return bool(self._measured()) and self._time_left() < self._next_burst_estimate()

    def _finish(self, trial: optuna.Trial, done: Trial) -> Trial:
        """Persist the trial in the study as it ends: nothing measured is lost to a crash."""
        record(trial, done)
        if done.ok:
            self.study.tell(trial, done.samples_per_s)
        else:
            # Skipped: pruned, so the sampler learns to avoid the region; failed: no value at all.
            state = optuna.trial.TrialState.PRUNED if done.status == SKIPPED else optuna.trial.TrialState.FAIL
            self.study.tell(trial, state=state)
        return done

    def _run_trial(self, trial: optuna.Trial, config: LoaderConfig) -> Trial | None:
        """The trial, measured, failed or skipped; None if a stop signal cut its burst short (it
        is then told to the study as failed without a record, so a resume measures it)."""
        number = len(self.trials)
        main_mib = tree_memory_mib()[1]
        reason = self.guard.skip_reason(config, main_mib=main_mib)
        if reason is not None:
            return self._finish(trial, Trial(number, config, SKIPPED, error=reason, origin=self.origin,
                                             finished_s=self._elapsed()))
        # The window may not outlast the budget; start-up and warm-up come on top.
        window_cap = max(self.options.burst.min_seconds, self._time_left() * 0.8)
        try:
            with self.stop.interruptible():
                result = self.measure(config, max_seconds=window_cap)
        except StopRequested:
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return None
        except AutotuneError:
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        except Exception as exc:  # one failing configuration fails one trial, not the run
            if self.stop.requested:  # e.g. workers ended by the same signal as this process
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                return None
            return self._finish(trial, Trial(number, config, FAILED, error=describe_failure(exc),
                                             traceback=failure_traceback(exc), origin=self.origin,
                                             finished_s=self._elapsed()))
        self.guard.observe(result, main_mib)
        return self._finish(trial, Trial(number, config, OK, result=result, origin=self.origin,
                                         diagnosis=diagnose(result, self.context),
                                         finished_s=self._elapsed()))

    def _tell_known(self, trial: optuna.Trial, known: Known) -> None:
        """Measured already (here, before a resume, or by another process sharing the study), or
        being measured elsewhere: tell the study what is known instead of measuring again."""
        if known.value is not None:
            self.study.tell(trial, known.value)
        else:
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)

    def run(self) -> TuneResult:
        # Trial 0 is PyTorch's defaults, so every report shows the gain over doing nothing.
        self.ledger.enqueue_once(PYTORCH_DEFAULTS.as_dict())
        repeats = 0
        while not self._should_stop():
            trial = self.study.ask()
            config = self.space.suggest(trial)
            known = self.ledger.settle(trial, config)
            if known is not None:
                repeats += 1
                self._tell_known(trial, known)
                if repeats >= MAX_REPEATS_IN_A_ROW:
                    break
                continue
            repeats = 0
            done = self._run_trial(trial, config)
            if done is None:
                break
            self.trials.append(done)
            if self.on_trial is not None:
                self.on_trial(self._progress(done))
        return self._result()

    def _progress(self, last: Trial | None) -> Progress:
        best = pick_best(self.trials)
        return Progress(len(self.trials), time.perf_counter() - self.t0, self.options.budget_s,
                        best.samples_per_s if best else None, last)

    def _result(self) -> TuneResult:
        # Joining a named study, the result is the study's: every process's trials so far.
        trials = trials_of(self.study) if self.options.study_name is not None else self.trials
        baseline = find_baseline([t for t in trials if t.measured])
        best = pick_best(trials)
        elapsed = self._elapsed()
        for t in trials:  # trials read back from a study come without a verdict
            if t.ok and t.diagnosis is None:
                t.diagnosis = diagnose(t.result, self.context)
        # The tuned and the default configuration get recommendations drawn from all trials.
        for chosen in {id(t): t for t in (best, baseline) if t is not None and t.ok}.values():
            chosen.diagnosis = explain(chosen.result, trials, self.context)
        recipe = None
        if best is not None:
            recipe = build_recipe(best.result, baseline.result if baseline and baseline.ok else None,
                                  self.workload.describe(), self.device,
                                  environment_block=best.origin,
                                  diagnosis=best.diagnosis.to_record(),
                                  trials=len([t for t in trials if t.measured]),
                                  tuning_s=round(elapsed, 1),
                                  target_rate_samples_per_s=self.options.target_rate)
        return TuneResult(recipe, trials, best, baseline, self.workload, self.device, elapsed,
                          self.context, interrupted=self.stop.name or None)


def broken_workload_error(result: TuneResult) -> WorkloadError:
    failed = [t for t in result.trials if t.status == FAILED]
    defaults = " (PyTorch's defaults included)" if any(t.config == PYTORCH_DEFAULTS for t in failed) else ""
    where = f"; tracebacks in {result.files['failures']}" if "failures" in result.files else ""
    return WorkloadError(f"workload '{result.workload.name}' is broken: it failed in all"
                         f" {len(failed)} configurations tried{defaults}; first error:"
                         f" {failed[0].error if failed else 'none recorded'}{where}",
                         detail=failed[0].traceback if failed else None)


def _check_budgets(opts: TuneOptions) -> None:
    """Budgets that cannot fit even one burst of PyTorch's defaults: refused before anything runs."""
    if opts.budget_s < opts.burst.min_seconds:
        raise OptionsError(f"--budget {opts.budget_s:g} s cannot fit even one burst: its measuring"
                           f" window alone takes at least {opts.burst.min_seconds:g} s")
    guard = MemoryGuard(opts.ram_budget_mib or default_ram_budget_mib(), batch_mib=0.0)
    reason = guard.skip_reason(PYTORCH_DEFAULTS)  # no workers: the tuning process alone
    if reason is not None:
        raise OptionsError(f"--ram-budget {guard.budget_mib:g} MiB cannot fit even PyTorch's"
                           f" defaults: {reason}")


def tune(workload: Workload, *, on_trial: Callable[[Progress], None] | None = None,
         workload_factory: WorkloadFactory | None = None, **options: Any) -> TuneResult:
    """Tune `workload`'s input pipeline. Options are those of TuneOptions (budget_s, max_trials,
    device, seed, max_workers, results_dir, storage, study_name, ranks_per_node, ram_budget_mib,
    resume, burst, target_rate, trace, nvtx). Writes a run folder unless results_dir=None (and
    resume is not set). With ranks_per_node > 1, `workload_factory(device)` builds the workload
    in each extra rank's process (it must be picklable).

    Raises TuningInterrupted (a KeyboardInterrupt) on SIGINT/SIGTERM, after writing the report of
    what was measured; WorkloadError when the workload fails in every configuration."""
    from autotune.report.writer import STUDY_FILE, new_run_dir, write_run

    opts = TuneOptions(**options)
    _check_budgets(opts)
    nvtx = load_nvtx() if opts.nvtx else None
    if opts.nvtx and nvtx is None:
        raise OptionsError("--nvtx: this torch build cannot call NVTX (a CUDA build of torch can)")
    if opts.trace and opts.results_dir is None and opts.resume is None:
        raise OptionsError("--trace writes into the run folder: give a results directory")
    ranks = opts.ranks_per_node or 1
    if ranks > 1 and workload_factory is None:
        raise OptionsError("ranks_per_node > 1 needs workload_factory: each rank builds its own workload")
    if ranks > 1 and opts.target_rate is not None:
        raise OptionsError("--target-rate replaces the step in this process only: use it with one"
                           " rank per node")
    # Create the run folder first: an unwritable results directory must fail before, not after,
    # minutes of measuring.
    if opts.resume is not None:
        run_dir, opts = resume_target(opts.resume, opts)
    else:
        run_dir = new_run_dir(opts.results_dir, workload.name) if opts.results_dir is not None else None
    if run_dir is not None and opts.storage is None:
        # Every finished trial is persisted as it ends, next to the report.
        opts = opts.model_copy(update={"storage": str(run_dir / STUDY_FILE)})
    stop = StopSignals()
    with stop.installed():
        try:
            tuner = Tuner(workload, opts, on_trial, marks=nvtx_phases(nvtx) if nvtx is not None else None,
                          stop=stop)
            with RankGroup(ranks, workload_factory, tuner.device) if ranks > 1 else nullcontext() as group, \
                    fetch_ranges(nvtx) if nvtx is not None else nullcontext():
                tuner.ranks = group
                result = tuner.run()
        except StopRequested:  # during set-up: nothing measured yet
            raise TuningInterrupted(stop.name, None) from None
        if nvtx is not None:
            result.nvtx = range_cost(nvtx)
        if run_dir is not None:
            if opts.trace and result.best is not None and not stop.requested:
                with stop.interruptible():
                    result.trace = record_trace(result.workload, result.best.config, result.device,
                                                run_dir / "trace")
            write_run(result, run_dir)
    if stop.requested:
        result.interrupted = stop.name
        raise TuningInterrupted(stop.name, result)
    if result.best is None:
        raise broken_workload_error(result)
    return result
