"""The tuning loop: ask the study for a configuration, run a burst, tell the study, repeat."""

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
from autotune.burst.result import BurstResult
from autotune.burst.runner import run_burst
from autotune.cluster.ledger import StudyLedger
from autotune.cluster.ranks import RankGroup, WorkloadFactory
from autotune.cluster.slurm_env import process_slot
from autotune.diagnosis import Context, diagnose, explain
from autotune.errors import AutotuneError, OptionsError, WorkloadError
from autotune.profiling.nvtx import NvtxCost, fetch_ranges, load_nvtx, nvtx_phases, range_cost
from autotune.profiling.trace import TraceRecord, record_trace
from autotune.recipe.build import build_recipe
from autotune.recipe.model import Recipe
from autotune.search.choose import find_baseline, pick_best
from autotune.search.options import TuneOptions
from autotune.search.study import claim_lock, describe_study, open_study, record, trials_of
from autotune.search.trial import FAILED, OK, Trial
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace, max_workers_for
from autotune.telemetry.nvml import NvmlSampler
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import is_image_batch, iter_tensors
from autotune.workload.accelerator import with_target_rate
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device

STUDY_FILE = "study.journal"

# Stop asking once the sampler keeps proposing points already measured: the space is covered.
MAX_REPEATS_IN_A_ROW = 30


@dataclass
class Progress:
    done: int
    elapsed_s: float
    budget_s: float
    best_samples_per_s: float | None
    last: Trial | None = None


@dataclass
class TuneResult:
    recipe: Recipe
    trials: list[Trial]
    best: Trial
    baseline: Trial
    workload: Workload
    device: torch.device
    elapsed_s: float
    context: Context
    run_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    trace: TraceRecord | None = None  # --trace
    nvtx: NvtxCost | None = None  # --nvtx: what one range costs here

    def loader(self, **overrides: Any) -> DataLoader:
        """A DataLoader over the tuned workload's data with the recipe applied."""
        w = self.workload
        base = dict(shuffle=w.shuffle if w.sampler is None else False, sampler=w.sampler,
                    collate_fn=w.collate_fn, drop_last=w.drop_last)
        return self.recipe.dataloader(w.dataset, w.batch_size, **{**base, **overrides})

    def device_loader(self, **overrides: Any) -> DeviceLoader:
        """The tuned loader yielding device-ready batches (transfer knobs applied)."""
        return self.recipe.wrap(self.loader(**overrides), self.device)


def _pick_device(workload: Workload, requested: str) -> torch.device:
    if workload.device is None:
        return resolve_device(requested)
    if requested != "auto" and resolve_device(requested) != workload.device:
        raise OptionsError(f"--device {requested} differs from the device the workload's step was"
                           f" built for ({workload.device}); drop --device or rebuild the workload")
    return workload.device


def probe_batch(workload: Workload) -> Any:
    """One batch through the plain loader: proves the workload loads and shows the input layout."""
    try:
        return next(iter(workload.make_loader(PYTORCH_DEFAULTS)))
    except StopIteration:
        raise WorkloadError(f"workload '{workload.name}' yields no batch: the dataset is smaller"
                            " than one batch") from None


def build_space(workload: Workload, device: torch.device, max_workers: int | None,
                cpus: int | None = None) -> SearchSpace:
    first = next(iter_tensors(probe_batch(workload)), None)
    cpus = usable_cpus().count if cpus is None else cpus
    cap = max_workers_for(cpus, **({"cap": max_workers} if max_workers else {}))
    return SearchSpace(max_workers=cap, cuda=device.type == "cuda",
                       channels_last_ok=first is not None and is_image_batch(first))


class Tuner:
    def __init__(self, workload: Workload, options: TuneOptions,
                 on_trial: Callable[[Progress], None] | None = None, ranks: RankGroup | None = None,
                 marks: PhaseHook | None = None):
        self.t0 = time.perf_counter()  # the budget covers the probe batch and study set-up too
        if options.target_rate is not None:
            workload = with_target_rate(workload, options.target_rate)
        self.workload = workload
        self.options = options
        self.on_trial = on_trial
        self.marks = marks
        self.device = _pick_device(workload, options.device)
        self.cpus = usable_cpus(ranks=options.ranks_per_node).count
        self.space = build_space(workload, self.device, options.max_workers, self.cpus)
        seed = options.seed
        if options.study_name is not None and seed is not None:
            # Processes joining one study must not all propose the same points in the same order.
            seed += process_slot(os.environ)
        self.study = open_study(seed=seed, storage=options.storage, study_name=options.study_name)
        describe_study(self.study, workload.describe(), str(self.device))
        self.ledger = StudyLedger(self.study, claim_lock(options.storage))
        self.origin = environment.collect(self.device, ranks=options.ranks_per_node)
        self.ranks = ranks
        self.context = Context(usable_cpus=self.cpus, max_workers=self.space.max_workers,
                               target_rate=options.target_rate)
        self.gpu_sampler = (NvmlSampler.for_device(self.device.index or 0)
                            if self.device.type == "cuda" else None)
        self.trials: list[Trial] = []

    def measure(self, config: LoaderConfig, max_seconds: float | None = None) -> BurstResult:
        settings = self.options.burst.settings(max_seconds)
        local = partial(run_burst, self.workload, config, self.device, settings,
                        usable_cpus=self.cpus, gpu_sampler=self.gpu_sampler, marks=self.marks)
        return self.ranks.measure(config, settings, local) if self.ranks is not None else local()

    def _time_left(self, t0: float) -> float:
        return self.options.budget_s - (time.perf_counter() - t0)

    def _next_burst_estimate(self) -> float:
        durations = [t.result.duration_s for t in self.trials if t.ok]
        return statistics.median(durations) if durations else 0.0

    def _run_trial(self, trial: optuna.Trial, config: LoaderConfig, t0: float) -> Trial:
        # The window may not outlast the budget; start-up and warm-up come on top.
        window_cap = max(self.options.burst.min_seconds, self._time_left(t0) * 0.8)
        try:
            result = self.measure(config, max_seconds=window_cap)
        except AutotuneError:
            raise
        except Exception as exc:  # one failing configuration fails one trial, not the run
            failed = Trial(len(self.trials), config, FAILED, error=f"{type(exc).__name__}: {exc}",
                           origin=self.origin, finished_s=time.perf_counter() - t0)
            record(trial, failed)
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return failed
        done = Trial(len(self.trials), config, OK, result=result, origin=self.origin,
                     diagnosis=diagnose(result, self.context), finished_s=time.perf_counter() - t0)
        record(trial, done)
        self.study.tell(trial, result.samples_per_s)
        return done

    def run(self) -> TuneResult:
        t0 = self.t0
        # Trial 0 is always PyTorch's defaults, so every report shows the gain over doing nothing.
        self.ledger.enqueue_once(PYTORCH_DEFAULTS.as_dict())
        repeats = 0
        while True:
            if self.options.max_trials is not None and len(self.trials) >= self.options.max_trials:
                break
            if self.trials and self._time_left(t0) < self._next_burst_estimate():
                break
            trial = self.study.ask()
            config = self.space.suggest(trial)
            known = self.ledger.settle(trial, config)
            if known is not None:
                # Measured already (here or by another process sharing the study), or being
                # measured elsewhere: tell the study what is known instead of measuring again.
                repeats += 1
                if known.value is not None:
                    self.study.tell(trial, known.value)
                else:
                    self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                if repeats >= MAX_REPEATS_IN_A_ROW:
                    break
                continue
            repeats = 0
            record = self._run_trial(trial, config, t0)
            self.trials.append(record)
            if self.on_trial is not None:
                self.on_trial(self._progress(t0, record))
        return self._result(t0)

    def _progress(self, t0: float, last: Trial | None) -> Progress:
        best = pick_best(self.trials)
        return Progress(len(self.trials), time.perf_counter() - t0, self.options.budget_s,
                        best.samples_per_s if best else None, last)

    def _result(self, t0: float) -> TuneResult:
        # Joining a named study, the result is the study's: every process's trials so far.
        trials = trials_of(self.study) if self.options.study_name is not None else self.trials
        baseline = find_baseline(trials)
        best = pick_best(trials)
        if baseline is None or best is None:
            first = baseline.error if baseline is not None else "no configuration was measured"
            raise WorkloadError(f"workload '{self.workload.name}' failed in every configuration tried;"
                                f" first error: {first}")
        elapsed = time.perf_counter() - t0
        for t in trials:  # trials read back from a shared study come without a verdict
            if t.ok and t.diagnosis is None:
                t.diagnosis = diagnose(t.result, self.context)
        # The tuned and the default configuration get recommendations drawn from all trials.
        for chosen in {id(t): t for t in (best, baseline) if t.ok}.values():
            chosen.diagnosis = explain(chosen.result, trials, self.context)
        recipe = build_recipe(best.result, baseline.result if baseline.ok else None,
                              self.workload.describe(), self.device, environment_block=best.origin,
                              diagnosis=best.diagnosis.to_record(), trials=len(trials),
                              tuning_s=round(elapsed, 1),
                              target_rate_samples_per_s=self.options.target_rate)
        return TuneResult(recipe, trials, best, baseline, self.workload, self.device, elapsed,
                          self.context)


def tune(workload: Workload, *, on_trial: Callable[[Progress], None] | None = None,
         workload_factory: WorkloadFactory | None = None, **options: Any) -> TuneResult:
    """Tune `workload`'s input pipeline. Options are those of TuneOptions (budget_s, max_trials,
    device, seed, max_workers, results_dir, storage, study_name, ranks_per_node, burst,
    target_rate, trace, nvtx). Writes a run folder unless results_dir=None. With ranks_per_node > 1,
    `workload_factory(device)` builds the workload in each extra rank's process (it must be
    picklable)."""
    from autotune.report.writer import new_run_dir, write_run

    opts = TuneOptions(**options)
    nvtx = load_nvtx() if opts.nvtx else None
    if opts.nvtx and nvtx is None:
        raise OptionsError("--nvtx: this torch build cannot call NVTX (a CUDA build of torch can)")
    if opts.trace and opts.results_dir is None:
        raise OptionsError("--trace writes into the run folder: give a results directory")
    # Create the run folder first: an unwritable results directory must fail before, not after,
    # minutes of measuring.
    run_dir = new_run_dir(opts.results_dir, workload.name) if opts.results_dir is not None else None
    if run_dir is not None and opts.storage is None:
        # Every finished trial is persisted as it ends, next to the report.
        opts = opts.model_copy(update={"storage": str(run_dir / STUDY_FILE)})
    ranks = opts.ranks_per_node or 1
    if ranks > 1 and workload_factory is None:
        raise OptionsError("ranks_per_node > 1 needs workload_factory: each rank builds its own workload")
    if ranks > 1 and opts.target_rate is not None:
        raise OptionsError("--target-rate replaces the step in this process only: use it with one"
                           " rank per node")
    tuner = Tuner(workload, opts, on_trial, marks=nvtx_phases(nvtx) if nvtx is not None else None)
    with RankGroup(ranks, workload_factory, tuner.device) if ranks > 1 else nullcontext() as group, \
            fetch_ranges(nvtx) if nvtx is not None else nullcontext():
        tuner.ranks = group
        result = tuner.run()
    if nvtx is not None:
        result.nvtx = range_cost(nvtx)
    if run_dir is not None:
        if opts.trace:
            result.trace = record_trace(result.workload, result.best.config, result.device,
                                        run_dir / "trace")
        write_run(result, run_dir)
    return result
