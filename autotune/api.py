"""`autotune.tune`: the public entry point. It checks the options, claims the run folder, runs the
Tuner under the stop signals (with helper ranks and NVTX ranges when asked), writes the report,
and turns what cannot be recommended into an error.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

from autotune.burst.ranks import RankGroup, WorkloadFactory
from autotune.errors import OptionsError, WorkloadError
from autotune.profiling.nvtx import fetch_ranges, load_nvtx, nvtx_phases, range_cost
from autotune.profiling.trace import record_trace
from autotune.report.writer import write_run
from autotune.run_folder import claim
from autotune.search.guard import MemoryGuard, default_ram_budget_mib
from autotune.search.interrupt import StopRequested, StopSignals, TuningInterrupted
from autotune.search.options import BurstOptions, TuneOptions
from autotune.search.result import TuneResult, TuningProgress
from autotune.search.trial import TrialStatus
from autotune.search.tuner import Tuner
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.space.start_method import start_method
from autotune.workload.base import Workload


def broken_workload_error(result: TuneResult) -> WorkloadError:
    failed = [t for t in result.trials if t.status == TrialStatus.FAILED]
    defaults = (
        " (PyTorch's defaults included)"
        if any(t.config == PYTORCH_DEFAULTS for t in failed)
        else ""
    )
    where = f"; tracebacks in {result.files['failures']}" if "failures" in result.files else ""
    return WorkloadError(
        f"workload '{result.workload.name}' is broken: it failed in all"
        f" {len(failed)} configurations tried{defaults}; first error:"
        f" {failed[0].error if failed else 'none recorded'}{where}",
        detail=failed[0].traceback if failed else None,
    )


def nothing_ran_error(result: TuneResult) -> WorkloadError | None:
    """No burst ran at all: every configuration was skipped before it started (RAM, /dev/shm)."""
    if any(t.measured for t in result.trials):
        return None
    skipped = [t for t in result.trials if t.status == TrialStatus.SKIPPED]
    if not skipped:
        return None
    return WorkloadError(
        f"workload '{result.workload.name}': no configuration could run, each was"
        f" skipped before it started; first: {skipped[0].error}"
    )


def over_budget_error(result: TuneResult) -> WorkloadError | None:
    """Every configuration that ran measured over the RAM budget: nothing may be recommended."""
    ran = [t for t in result.trials if t.result is not None]
    if not ran or any(t.status != TrialStatus.REJECTED for t in ran):
        return None
    return WorkloadError(
        f"workload '{result.workload.name}': every configuration that ran was"
        f" rejected, first with {ran[0].error}; raise --ram-budget"
    )


def workers_failed_error(result: TuneResult) -> WorkloadError | None:
    """Every configuration with DataLoader workers failed while one without them ran: a recipe
    of num_workers=0 would hide a broken worker set-up (a dataset that spawn or forkserver
    workers cannot import or unpickle, most often) behind a slow but working default."""
    pooled = [t for t in result.trials if t.measured and t.config.num_workers > 0]
    if not pooled or any(t.status != TrialStatus.FAILED for t in pooled):
        return None
    method = start_method()
    if "time limit" in (pooled[0].error or ""):
        fix = (
            "lower --max-workers, or give each burst more time (burst time_limit_s): the pools"
            " did not deliver in time"
        )
    elif method != "fork":
        fix = (
            "make the dataset, collate_fn and step importable and picklable in a fresh process"
            " (define them at the top level of a module or FILE.py, not in a function or"
            " notebook cell)"
        )
    else:
        fix = "the workers' tracebacks say why (a small /dev/shm: docker run --shm-size=2g)"
    where = f"; measured trials and tracebacks in {result.run_dir}" if result.run_dir else ""
    return WorkloadError(
        f"workload '{result.workload.name}': DataLoader workers ({method} start method) failed in"
        f" all {len(pooled)} configurations with workers, first: {pooled[0].error}; {fix}{where}"
    )


def _check_budgets(opts: TuneOptions) -> None:
    """Budgets that cannot fit even one burst of PyTorch's defaults: refused before anything
    runs."""
    if opts.budget_s < opts.burst.min_seconds:
        raise OptionsError(
            f"--budget {opts.budget_s:g} s cannot fit even one burst: its measuring"
            f" window alone takes at least {opts.burst.min_seconds:g} s"
        )
    guard = MemoryGuard(opts.ram_budget_mib or default_ram_budget_mib(), batch_mib=0.0)
    reason = guard.skip_reason(PYTORCH_DEFAULTS)  # no workers: the tuning process alone
    if reason is not None:
        raise OptionsError(
            f"--ram-budget {guard.budget_mib:g} MiB cannot fit even PyTorch's defaults: {reason}"
        )


def _check_options(opts: TuneOptions, nvtx: Any, workload_factory: WorkloadFactory | None) -> None:
    """Combinations refused before anything runs."""
    if opts.nvtx and nvtx is None:
        raise OptionsError("--nvtx: this torch build cannot call NVTX (a CUDA build of torch can)")
    if opts.trace and opts.results_dir is None and opts.resume is None:
        raise OptionsError("--trace writes into the run folder: give a results directory")
    ranks = opts.ranks_per_node or 1
    if ranks > 1 and workload_factory is None:
        raise OptionsError(
            "ranks_per_node > 1 needs workload_factory: each rank builds its own workload"
        )
    if ranks > 1 and opts.target_rate is not None:
        raise OptionsError(
            "--target-rate replaces the step in this process only: use it with one rank per node"
        )


# The names the Python API had before it took the CLI's: each still works, with a warning.
RENAMED = {
    "budget_s": "budget",
    "max_trials": "trials",
    "ram_budget_mib": "ram_budget",
    "study_name": "study",
}
# The TuneOptions field of each tune() keyword whose name differs (the search code reads the
# model's names).
FIELDS = {new: old for old, new in RENAMED.items()}


def _renamed(old: dict[str, Any]) -> dict[str, Any]:
    """The new names of deprecated keywords, each with a DeprecationWarning; a TypeError for a
    keyword tune() does not take, as Python gives."""
    unknown = [k for k in old if k not in RENAMED]
    if unknown:
        raise TypeError(f"tune() got an unexpected keyword argument {unknown[0]!r}")
    for name in old:
        warnings.warn(
            f"autotune.tune({name}=...) is deprecated: use {RENAMED[name]}=..., as the"
            f" CLI's --{RENAMED[name].replace('_', '-')}",
            DeprecationWarning,
            stacklevel=3,
        )
    return {RENAMED[k]: v for k, v in old.items()}


def tune(
    workload: Workload,
    *,
    budget: float = 60.0,
    trials: int | None = None,
    early_stop: bool = True,
    knobs: tuple[str, ...] = (),
    device: str = "auto",
    seed: int | None = 0,
    max_workers: int | None = None,
    ram_budget: float | None = None,
    results_dir: Path | None = Path("results"),
    storage: str | None = None,
    study: str | None = None,
    ranks_per_node: int | None = None,
    resume: Path | None = None,
    burst: BurstOptions | dict[str, Any] | None = None,
    target_rate: float | None = None,
    trace: bool = False,
    nvtx: bool = False,
    stages: bool = True,
    on_trial: Callable[[TuningProgress], None] | None = None,
    workload_factory: WorkloadFactory | None = None,
    **deprecated: Any,
) -> TuneResult:
    """Tune `workload`'s input pipeline. The keywords are `autotune tune`'s options, by the same
    names (`budget` is `--budget`, `ram_budget` is `--ram-budget`):

    Args:
        workload: what to tune (a `Workload`; `autotune.workload` builds them).
        budget: wall-clock budget in seconds for the whole tuning.
        trials: stop after this many measured trials.
        early_stop: end the search once the device ceiling is reached or nothing improves.
        knobs: opt-in knobs to search as well (e.g. `("in_order",)`).
        device: `"auto"`, `"cpu"` or `"cuda[:index]"`.
        seed: seed of the search.
        max_workers: cap on num_workers (default 4x usable CPUs, at most 32).
        ram_budget: host RAM in MiB a configuration may use (default: half of what is available).
        results_dir: where run folders go; None writes nothing (unless `resume` is set).
        storage: optuna storage, an RDB URL or a journal file path.
        study: join or create this study in the storage.
        ranks_per_node: measure each configuration on this many ranks at once.
        resume: run folder of an earlier tuning to continue.
        burst: burst settings (`BurstOptions` or its fields as a dict).
        target_rate: replace the step with a simulated accelerator consuming this many samples/s.
        trace: record a torch.profiler trace of the tuned configuration.
        nvtx: wrap fetch, collate, copy and step in NVTX ranges.
        stages: time the pipeline's stages in one short burst of the tuned configuration.
        on_trial: called with the progress after each trial.
        workload_factory: with ranks_per_node > 1, builds the workload in each extra rank's
            process from its device (it must be picklable).

    Deprecated aliases, each with a DeprecationWarning: `budget_s` (`budget`), `max_trials`
    (`trials`), `ram_budget_mib` (`ram_budget`), `study_name` (`study`).

    Raises:
        TuningInterrupted: (a KeyboardInterrupt) on SIGINT/SIGTERM, after writing the report of
            what was measured.
        WorkloadError: when the workload fails in every configuration, every configuration
            with workers failed (no recipe.json is left), or every configuration measured over
            the RAM budget.
    """
    given = dict(
        budget=budget,
        trials=trials,
        early_stop=early_stop,
        knobs=knobs,
        device=device,
        seed=seed,
        max_workers=max_workers,
        ram_budget=ram_budget,
        results_dir=results_dir,
        storage=storage,
        study=study,
        ranks_per_node=ranks_per_node,
        resume=resume,
        burst=BurstOptions() if burst is None else burst,
        target_rate=target_rate,
        trace=trace,
        nvtx=nvtx,
        stages=stages,
    )
    given.update(_renamed(deprecated))
    opts = TuneOptions(**{FIELDS.get(name, name): value for name, value in given.items()})
    return tune_with(workload, opts, on_trial=on_trial, workload_factory=workload_factory)


def tune_with(
    workload: Workload,
    opts: TuneOptions,
    *,
    on_trial: Callable[[TuningProgress], None] | None = None,
    workload_factory: WorkloadFactory | None = None,
) -> TuneResult:
    """`tune` with its options already made (the CLI's path)."""
    _check_budgets(opts)
    nvtx = load_nvtx() if opts.nvtx else None
    _check_options(opts, nvtx, workload_factory)
    run_dir, opts = claim(opts, workload.name)
    ranks = opts.ranks_per_node or 1
    stop = StopSignals()
    with stop.installed():
        try:
            tuner = Tuner(
                workload,
                opts,
                on_trial,
                marks=nvtx_phases(nvtx) if nvtx is not None else None,
                stop=stop,
            )
            group = (
                RankGroup(ranks, workload_factory, tuner.device)
                if ranks > 1 and workload_factory is not None
                else nullcontext()
            )
            with group as helpers, fetch_ranges(nvtx) if nvtx is not None else nullcontext():
                tuner.ranks = helpers
                result = tuner.run()
        except StopRequested:  # during set-up: nothing measured yet
            raise TuningInterrupted(stop.name, None) from None
        if nvtx is not None:
            result.nvtx = range_cost(nvtx)
        if run_dir is not None:
            if opts.trace and result.best is not None and not stop.requested:
                with stop.interruptible():
                    result.trace = record_trace(
                        result.workload, result.best.config, result.device, run_dir / "trace"
                    )
            write_run(result, run_dir)
    if stop.requested:
        result.interrupted = stop.name
        raise TuningInterrupted(stop.name, result)
    if result.best is None:
        raise (
            nothing_ran_error(result) or over_budget_error(result) or broken_workload_error(result)
        )
    error = workers_failed_error(result)
    if error is not None:
        # The trials, the report and failures.txt stay; a recipe of no workers would be taken
        # for a tuned one (`autotune verify RUN_DIR`, a script loading it).
        recipe = result.files.pop("recipe", None)
        if recipe is not None:
            recipe.unlink(missing_ok=True)
        raise error
    return result
