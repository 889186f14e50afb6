"""The tuning loop: probe the two ceilings, search from seeds near the prediction (ask a
configuration, run a burst, tell the study), re-measure the best few, and choose the cheapest
configuration within noise of the fastest.

A failing configuration fails one trial, not the run; one that cannot fit in memory is skipped
before it runs and one measured over the RAM budget is rejected (guard.py); a stop signal ends
the current burst and keeps what was measured (interrupt.py); a study that already holds trials
is continued, not re-measured (resume.py).
"""

from __future__ import annotations

import os
import statistics
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import optuna
import torch
from torch.utils.data import DataLoader

from autotune import environment
from autotune.burst.failure import describe_failure, failure_traceback
from autotune.burst.result import BurstResult
from autotune.burst.runner import ProgressHook, run_burst
from autotune.burst.watchdog import time_limit
from autotune.search.ledger import StudyLedger
from autotune.burst.ranks import RankGroup, WorkloadFactory
from autotune.slurm_env import process_slot
from autotune.diagnosis import Context, diagnose, explain
from autotune.diagnosis.evidence import KnownCeilings
from autotune.errors import AutotuneError, OptionsError, WorkloadError
from autotune.probe.ceilings import Ceilings
from autotune.probe.run import PROBE_SETTINGS, probe_loader, run_probes
from autotune.profiling.nvtx import NvtxCost, fetch_ranges, load_nvtx, nvtx_phases, range_cost
from autotune.profiling.trace import TraceRecord, record_trace
from autotune.recipe.build import build_recipe
from autotune.recipe.model import Recipe
from autotune.search.choose import Choice, choose, find_baseline, group, pick_best
from autotune.search.confirm import (MAX_MEASUREMENTS, MEASUREMENTS, out_of_band, reserved_bursts,
                                     rounds, still_tied, to_confirm)
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.interrupt import StopRequested, StopSignals, TuningInterrupted
from autotune.search.options import TuneOptions
from autotune.search.pruning import BehindBestPruner, PruneHook, Reach
from autotune.search.resume import check_setup, resume_target
from autotune.search.seeding import seed_configs
from autotune.search.stopping import StopRules
from autotune.search.study import (add_remeasurement, claim_lock, describe_study, open_study, record,
                                   trials_of)
from autotune.search.trial import Phase, TrialStatus, TrialRecord, trial_counts
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace, max_workers_for
from autotune.telemetry.host import MIB, tree_memory_mib
from autotune.telemetry.nvml import NvmlSampler
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import is_image_batch, iter_tensors
from autotune.workload.accelerator import with_target_rate
from autotune.workload.base import Workload
from autotune.workload.device import device_for

# A sampler that proposed this many taken points in a row has converged on them (answered with
# no observation, it would go on): the search continues from the nearest untaken point instead.
REPEATS_BEFORE_FALLBACK = 3
# This many failed bursts and not one success, PyTorch's defaults among them: the workload
# itself is broken, and spending the rest of the budget would only repeat the error.
BROKEN_AFTER_FAILURES = 3
# At most this share of the budget is held back from the search for the re-measurements.
CONFIRM_SHARE = 0.3
# Another burst (or probe) starts only if this many times the longest one so far still fits:
# on a busy machine the same configuration can take half as long again.
SAFETY = 1.5


@dataclass
class TuningProgress:
    done: int
    elapsed_s: float
    budget_s: float
    best_samples_per_s: float | None
    last: TrialRecord | None = None


@dataclass
class TuneResult:
    """What a tuning measured. `recipe`, `best` and `baseline` are None only when nothing
    succeeded yet (a tuning interrupted early, or a broken workload)."""

    recipe: Recipe | None
    trials: list[TrialRecord]
    best: TrialRecord | None  # the chosen configuration's measurement closest to its mean
    baseline: TrialRecord | None
    workload: Workload
    device: torch.device
    elapsed_s: float
    context: Context
    interrupted: str | None = None  # the signal that stopped the tuning early
    run_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    trace: TraceRecord | None = None  # --trace
    nvtx: NvtxCost | None = None  # --nvtx: what one range costs here
    ceilings: Ceilings | None = None  # None where the probes could not run
    choice: Choice | None = None
    stop_reason: str = ""  # why the search phase ended

    @property
    def config(self) -> LoaderConfig | None:
        return self.best.config if self.best is not None else None

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
                 on_trial: Callable[[TuningProgress], None] | None = None, ranks: RankGroup | None = None,
                 marks: PhaseHook | None = None, stop: StopSignals | None = None):
        self.t0 = time.perf_counter()  # the budget covers the probes and study set-up too
        if options.target_rate is not None:
            workload = with_target_rate(workload, options.target_rate)
        self.workload = workload
        self.options = options
        self.on_trial = on_trial
        self.marks = marks
        self.stop = stop or StopSignals()
        self.device = device_for(workload.device, options.device)
        self.cpus = usable_cpus(ranks=options.ranks_per_node).count
        with self.stop.interruptible():
            self.batch = probe_batch(workload, options.burst.time_limit)  # kept for the probes
        self.space = build_space(self.batch, self.device, options.max_workers, self.cpus)
        self.context = Context(usable_cpus=self.cpus, max_workers=self.space.max_workers,
                               target_rate=options.target_rate)
        self.guard = MemoryGuard(options.ram_budget_mib or default_ram_budget_mib(),
                                 batch_mib(self.batch))
        seed = options.seed
        if options.study_name is not None and seed is not None:
            # Processes joining one study must not all propose the same points in the same order.
            seed += process_slot(os.environ)
        self.study = open_study(seed=seed, storage=options.storage, study_name=options.study_name,
                                pruner=BehindBestPruner())
        if options.resume is not None:
            check_setup(self.study, workload.describe(), str(self.device))
        describe_study(self.study, workload.describe(), str(self.device))
        self.ledger = StudyLedger(self.study, claim_lock(options.storage))
        # Collected now, inside the budget: the first collection imports torchvision (seconds).
        self.origin = environment.collect(self.device, ranks=options.ranks_per_node)
        self.ranks = ranks
        self.gpu_sampler = (NvmlSampler.for_device(self.device.index or 0)
                            if self.device.type == "cuda" else None)
        # Resuming: the trials measured before count as this tuning's own (numbering, --trials).
        # The ledger keeps any configuration the study knows from being measured again.
        self.trials: list[TrialRecord] = trials_of(self.study) if options.resume is not None else []
        self.ceilings: Ceilings | None = None
        self.stop_reason = ""

    # -- time ---------------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def _time_left(self) -> float:
        return self.options.budget_s - self._elapsed()

    def _durations(self) -> list[float]:
        return [t.result.duration_s for t in self.trials if t.result is not None]

    def _next_burst_estimate(self) -> float:
        """What the next burst will probably cost: for planning."""
        return statistics.median(self._durations() or [0.0])

    def _fits_another(self) -> bool:
        """Whether even a slow burst still ends within the budget: for honouring it."""
        return self._time_left() >= SAFETY * max(self._durations() or [0.0])

    def _confirm_reserve(self) -> float:
        return min(CONFIRM_SHARE * self.options.budget_s,
                   reserved_bursts() * self._next_burst_estimate())

    # -- measuring ----------------------------------------------------------------------------
    def measure(self, config: LoaderConfig, max_seconds: float | None = None,
                on_progress: ProgressHook | None = None) -> BurstResult:
        settings = self.options.burst.settings(max_seconds)
        local = partial(run_burst, self.workload, config, self.device, settings,
                        usable_cpus=self.cpus, gpu_sampler=self.gpu_sampler, marks=self.marks,
                        on_progress=on_progress)
        return self.ranks.measure(config, settings, local) if self.ranks is not None else local()

    def _measured(self) -> list[TrialRecord]:
        return [t for t in self.trials if t.measured]

    def broken(self) -> bool:
        """Failed again and again, PyTorch's defaults included, and never once succeeded."""
        measured = self._measured()
        return (len(measured) >= BROKEN_AFTER_FAILURES and not any(t.ok for t in measured)
                and any(t.config == PYTORCH_DEFAULTS for t in measured))

    def _keep(self, trial: optuna.Trial | None, done: TrialRecord) -> TrialRecord:
        """Persist the trial in the study as it ends (nothing measured is lost to a crash): as
        `trial`'s outcome in the search, as a re-measurement of its own otherwise."""
        over_mib = (done.result.host.peak_pss_mib - self.guard.budget_mib
                    if done.result is not None else None)
        if trial is None:
            add_remeasurement(self.study, done, over_mib)
        else:
            record(trial, done)
            if done.result is not None and done.status in (TrialStatus.OK, TrialStatus.REJECTED):
                # Feasible when <= 0: the sampler learns where memory runs out.
                trial.set_constraint("ram_mib", over_mib)
                self.study.tell(trial, done.samples_per_s)
            else:
                # Skipped or pruned: the sampler learns to avoid the region; failed: no value.
                pruned = done.status in (TrialStatus.SKIPPED, TrialStatus.PRUNED)
                self.study.tell(trial, state=optuna.trial.TrialState.PRUNED if pruned
                                else optuna.trial.TrialState.FAIL)
        self.trials.append(done)
        if self.on_trial is not None:
            self.on_trial(self._progress(done))
        return done

    def _run_trial(self, config: LoaderConfig, phase: str,
                   trial: optuna.Trial | None = None) -> TrialRecord | None:
        """The trial, measured, failed, pruned, rejected or skipped; None if a stop signal cut
        its burst short (it is then told to the study as failed without a record, so a resume
        measures it)."""
        number = len(self.trials)
        made = partial(TrialRecord, number, config, phase=phase, origin=self.origin)
        main_mib = tree_memory_mib()[1]
        reason = self.guard.skip_reason(config, main_mib=main_mib)
        if reason is not None:
            return self._keep(trial, made(TrialStatus.SKIPPED, error=reason, finished_s=self._elapsed()))
        # The window may not outlast the budget; start-up and warm-up come on top.
        # The settle phase may take half the window's cap again (runner.settle).
        window_cap = max(self.options.burst.min_seconds, self._time_left() * 0.8 / 1.5)
        # Ranks measure together: cutting rank 0's burst short would leave the others waiting.
        hook = (PruneHook(trial, self._reach(self.options.burst.settings(window_cap).max_seconds))
                if trial is not None and self.ranks is None else None)
        try:
            with self.stop.interruptible():
                result = self.measure(config, max_seconds=window_cap, on_progress=hook)
        except StopRequested:
            if trial is not None:
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return None
        except optuna.TrialPruned as exc:
            return self._keep(trial, made(TrialStatus.PRUNED, error=str(exc), finished_s=self._elapsed()))
        except AutotuneError:
            if trial is not None:
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        except Exception as exc:  # one failing configuration fails one trial, not the run
            if self.stop.requested:  # e.g. workers ended by the same signal as this process
                if trial is not None:
                    self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                return None
            return self._keep(trial, made(TrialStatus.FAILED, error=describe_failure(exc),
                                          traceback=failure_traceback(exc),
                                          finished_s=self._elapsed()))
        self.guard.observe(result, main_mib)
        rejection = self.guard.rejection(result)
        if rejection is not None:
            return self._keep(trial, made(TrialStatus.REJECTED, result=result, error=rejection,
                                          finished_s=self._elapsed()))
        return self._keep(trial, made(TrialStatus.OK, result=result, diagnosis=diagnose(result, self.context),
                                      finished_s=self._elapsed()))

    def _reach(self, window_s: float) -> Reach | None:
        """No window runs faster than the device ceiling (once probed)."""
        if self.ceilings is None or self.ceilings.device_samples_per_s <= 0:
            return None
        return Reach(self.ceilings.device_samples_per_s, window_s)

    def _tell_known(self, trial: optuna.Trial) -> None:
        """Measured already (here, before a resume, or by another process sharing the study), or
        being measured elsewhere: close the ask without measuring. Told as failed, which samplers
        and the pruner ignore: the study already holds the point's own trial, and a second
        complete one would weigh it twice and drop its RAM constraint."""
        self.study.tell(trial, state=optuna.trial.TrialState.FAIL)

    def _fall_back(self) -> bool:
        """Enqueue the untaken point nearest the best so far; False when every point is taken."""
        best = pick_best(self._all_trials())
        near = best.config if best is not None else PYTORCH_DEFAULTS
        return self.ledger.enqueue_untaken(self.space.nearest_first(near), self.space.params) is not None

    # -- phases -------------------------------------------------------------------------------
    def _probe(self) -> Ceilings | None:
        """The two ceilings; None where the probe batch could not be loaded or a probe failed
        (the search then starts unseeded, and its trials show what is wrong)."""
        if self.batch is None:
            return None
        try:
            with self.stop.interruptible(), time_limit(self.options.burst.time_limit, "probing"):
                # The second loader probe only while at least half the budget is left for the search.
                return run_probes(self.workload, self.batch, self.device, self.space, self.cpus,
                                  PROBE_SETTINGS,
                                  second=lambda: self._time_left() > self.options.budget_s / 2)
        except (AutotuneError, StopRequested):
            raise
        except Exception:
            return None
        finally:
            self.batch = None  # a batch can be large: not held through the search

    def _stop_reason(self, rules: StopRules) -> str | None:
        if self.stop.requested:
            return f"stopped by {self.stop.name}"
        if self.broken():
            return "the workload failed in every configuration"
        searched = [t for t in self._measured() if t.phase == Phase.SEARCH]
        if self.options.max_trials is not None and len(searched) >= self.options.max_trials:
            return f"{len(searched)} trials (--trials)"
        if searched and (not self._fits_another() or
                         self._time_left() < self._next_burst_estimate() + self._confirm_reserve()):
            return "budget"
        return rules.reason()

    def _search(self, ceilings: Ceilings | None) -> None:
        seeds = [PYTORCH_DEFAULTS] + (seed_configs(ceilings, self.space) if ceilings else [])
        for config in seeds:  # trial 0 is PyTorch's defaults: every report shows the gain over it
            self.ledger.enqueue_once(self.space.params(config))
        rules = StopRules(ceilings.device_samples_per_s if ceilings else 0.0, seeds=len(seeds))
        for earlier in self.trials:  # resuming: what was measured before counts
            rules.update(earlier)
        repeats = 0
        while (reason := self._stop_reason(rules)) is None:
            trial = self.study.ask()
            config = self.space.suggest(trial)
            if self.ledger.settle(trial, config) is not None:
                repeats += 1
                self._tell_known(trial)
                if repeats >= REPEATS_BEFORE_FALLBACK:
                    repeats = 0
                    if not self._fall_back():
                        reason = "every configuration is measured or being measured"
                        break
                continue
            repeats = 0
            done = self._run_trial(config, Phase.SEARCH, trial)
            if done is None:
                reason = f"stopped by {self.stop.name}"
                break
            rules.update(done)
        self.stop_reason = reason

    def _confirm(self) -> None:
        if self.stop.requested or self.broken():
            return
        configs = to_confirm(group(self._all_trials()), self.space)
        for measurements in range(MEASUREMENTS, MAX_MEASUREMENTS + 1):
            if not configs or not self._remeasure(configs, measurements):
                return
            configs = still_tied(group(self._all_trials()))  # sequential: until the choice is sound

    def _remeasure(self, configs: list[LoaderConfig], measurements: int) -> bool:
        """Round-robin until each has `measurements`; False when time or a signal cut it short."""
        counts = {c.config: len(c.trials) for c in group(self._all_trials())}
        for config in rounds(configs, counts, measurements):
            if not self._fits_another():
                return False
            if any(t.config == config and t.measured and not t.ok for t in self.trials):
                continue  # failed, pruned or rejected once: not a candidate any more
            if out_of_band(config, group(self._all_trials())):
                continue  # measured far behind the fastest: no longer a contender
            if self._run_trial(config, Phase.CONFIRM) is None:
                return False
        return True

    def _loader_ceiling_at(self, ceilings: Ceilings, workers: int) -> None:
        """The loader alone at the chosen worker count, when not probed already and time allows."""
        if workers in ceilings.loader or self.stop.requested:
            return
        estimate = max((p.duration_s for p in ceilings.loader.values()), default=0.0)
        if self._time_left() < SAFETY * estimate:
            return
        try:
            with self.stop.interruptible(), time_limit(self.options.burst.time_limit, "probing"):
                ceilings.add(probe_loader(self.workload, workers, PROBE_SETTINGS, self.cpus))
        except (AutotuneError, StopRequested):
            raise
        except Exception:
            return  # the recipe then says the loader ceiling was not measured

    def _all_trials(self) -> list[TrialRecord]:
        # Joining a named study, the result is the study's: every process's trials so far.
        return trials_of(self.study) if self.options.study_name is not None else self.trials

    def run(self) -> TuneResult:
        try:
            self.ceilings = self._probe()
        except StopRequested:
            self.stop_reason = f"stopped by {self.stop.name}"
        else:
            if self.ceilings is not None:  # the verdicts of the trials can use it
                self.context = replace(self.context, ceilings=KnownCeilings(
                    device_samples_per_s=self.ceilings.device_samples_per_s))
            self._search(self.ceilings)
            self._confirm()
        return self._result()

    def _progress(self, last: TrialRecord | None) -> TuningProgress:
        best = pick_best(self.trials)
        return TuningProgress(len(self.trials), time.perf_counter() - self.t0, self.options.budget_s,
                        best.samples_per_s if best else None, last)

    def _result(self) -> TuneResult:
        trials = self._all_trials()
        baseline = find_baseline([t for t in trials if t.measured])
        choice = choose(group(trials))
        best = choice.chosen.representative() if choice is not None else None
        ceilings = self.ceilings
        measured: dict[str, Any] = {}
        if ceilings is not None and choice is not None:
            workers = choice.chosen.config.num_workers
            try:
                self._loader_ceiling_at(ceilings, workers)
            except StopRequested:
                pass  # the report of what was measured comes first
            loader, bound = ceilings.loader_at(workers), ceilings.bound_at(workers)
            self.context = replace(self.context, ceilings=KnownCeilings(
                ceilings.device_samples_per_s, loader))
            measured = dict(
                device_ceiling_samples_per_s=round(ceilings.device_samples_per_s, 2),
                loader_ceiling_samples_per_s=None if loader is None else round(loader, 2),
                ceiling_share=None if not bound else round(choice.chosen.mean / bound, 3),
                probes=ceilings.as_dict())
        elapsed = self._elapsed()
        for t in trials:  # trials read back from a study come without a verdict
            if t.ok and t.diagnosis is None:
                t.diagnosis = diagnose(t.result, self.context)
        # The tuned and the default configuration get recommendations drawn from all trials.
        for chosen in {id(t): t for t in (best, baseline) if t is not None and t.ok}.values():
            chosen.diagnosis = explain(chosen.result, trials, self.context)
        recipe = None
        if choice is not None and best is not None:
            recipe = build_recipe(
                best.result, baseline.result if baseline and baseline.ok else None,
                self.workload.describe(), self.device, environment_block=best.origin,
                diagnosis=best.diagnosis.to_record(), samples_per_s=choice.chosen.mean,
                tuning_s=round(elapsed, 1), target_rate_samples_per_s=self.options.target_rate,
                **trial_counts(trials), **measured,
                noise_pct=None if choice.noise_cv is None else round(100 * choice.noise_cv, 2),
                measurements=choice.chosen.n_unbiased, fastest_samples_per_s=round(choice.fastest.mean, 2),
                tied_with=[c.config.label() for c in choice.ties] or None,
                tie_band_pct=round(100 * choice.band, 2), ties_resolved=choice.resolved,
                ram_budget_mib=round(self.guard.budget_mib, 1), stop_reason=self.stop_reason)
        return TuneResult(recipe, trials, best, baseline, self.workload, self.device, elapsed,
                          self.context, interrupted=self.stop.name or None, ceilings=ceilings,
                          choice=choice, stop_reason=self.stop_reason)


def broken_workload_error(result: TuneResult) -> WorkloadError:
    failed = [t for t in result.trials if t.status == TrialStatus.FAILED]
    defaults = " (PyTorch's defaults included)" if any(t.config == PYTORCH_DEFAULTS for t in failed) else ""
    where = f"; tracebacks in {result.files['failures']}" if "failures" in result.files else ""
    return WorkloadError(f"workload '{result.workload.name}' is broken: it failed in all"
                         f" {len(failed)} configurations tried{defaults}; first error:"
                         f" {failed[0].error if failed else 'none recorded'}{where}",
                         detail=failed[0].traceback if failed else None)


def over_budget_error(result: TuneResult) -> WorkloadError | None:
    """Every configuration that ran measured over the RAM budget: nothing may be recommended."""
    ran = [t for t in result.trials if t.result is not None]
    if not ran or any(t.status != TrialStatus.REJECTED for t in ran):
        return None
    return WorkloadError(f"workload '{result.workload.name}': every configuration that ran was"
                         f" rejected, first with {ran[0].error}; raise --ram-budget")


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


def tune(workload: Workload, *, on_trial: Callable[[TuningProgress], None] | None = None,
         workload_factory: WorkloadFactory | None = None, **options: Any) -> TuneResult:
    """Tune `workload`'s input pipeline. Options are those of TuneOptions (budget_s, max_trials,
    device, seed, max_workers, results_dir, storage, study_name, ranks_per_node, ram_budget_mib,
    resume, burst, target_rate, trace, nvtx). Writes a run folder unless results_dir=None (and
    resume is not set). With ranks_per_node > 1, `workload_factory(device)` builds the workload
    in each extra rank's process (it must be picklable).

    Raises TuningInterrupted (a KeyboardInterrupt) on SIGINT/SIGTERM, after writing the report of
    what was measured; WorkloadError when the workload fails in every configuration, or every
    configuration measured over the RAM budget."""
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
            with RankGroup(ranks, workload_factory, tuner.device) if ranks > 1 else nullcontext() as helpers, \
                    fetch_ranges(nvtx) if nvtx is not None else nullcontext():
                tuner.ranks = helpers
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
        raise over_budget_error(result) or broken_workload_error(result)
    return result
