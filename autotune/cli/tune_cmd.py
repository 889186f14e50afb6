"""`autotune tune [WORKLOAD]`: the main job."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from autotune.api import tune_with
from autotune.burst.ranks import spec_factory
from autotune.cli.common import (
    DEBUG_OPTION,
    console,
    err_console,
    one_line_errors,
    option_error,
    print_diagnosis,
)
from autotune.errors import OptionsError
from autotune.online.memory import remember_recipe
from autotune.recipe.model import Measured, shown, speedup_text
from autotune.report import table
from autotune.search.interrupt import TuningInterrupted
from autotune.search.options import TuneOptions
from autotune.search.result import TuneResult, TuningProgress
from autotune.space.config import LoaderConfig
from autotune.verify.source import record_spec
from autotune.wording import counted
from autotune.workload.base import Workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

# Option fields whose flag is not --field-name.
FLAGS = {
    "budget_s": "--budget",
    "max_trials": "--trials",
    "ram_budget_mib": "--ram-budget",
    "study_name": "--study",
    "knobs": "--knob",
}


def _options(**values: object) -> TuneOptions:
    try:
        return TuneOptions(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None


def _ceilings_line(m: Measured) -> str:
    loader = (
        f"{m.loader_ceiling_samples_per_s:.1f}"
        if m.loader_ceiling_samples_per_s is not None
        else "not measured"
    )
    share = f"{100 * m.ceiling_share:.0f}%" if m.ceiling_share is not None else "n/a"
    noise = f"{m.noise_pct:.1f}%" if m.noise_pct is not None else "not estimated"
    return (
        f"ceilings: device {m.device_ceiling_samples_per_s:.1f}, loader at these workers {loader}"
        f" samples/s; tuned reaches {share} of the lower one; burst noise {noise}"
    )


def _warmup_note(m: Measured) -> str:
    """The device's one-time warm-up, when it was long enough to matter (left out of the budget)."""
    if m.device_warmup_s is None or m.device_warmup_s < 1:
        return ""
    return f", {m.device_warmup_s:.0f}s of it one-time device warm-up outside the budget"


def _show(result: TuneResult, out: Path | None) -> None:
    console.print(
        table.to_rich(
            table.rows(result.trials, result.best, result.baseline),
            title=f"autotune: {result.workload.name} on {result.device}",
            width=console.width,
        )
    )
    if result.recipe is not None and result.best is not None:
        m = result.recipe.measured
        console.print(
            f"PyTorch defaults: [bold]{shown(m.baseline_samples_per_s, '.1f')}[/] samples/s ->"
            f" tuned: [bold green]{shown(m.samples_per_s, '.1f')}[/] samples/s"
            f" ({speedup_text(m.speedup)}) with {result.best.config.label()}; {m.trials} trials"
            f" + {m.remeasured} re-measurements + {m.recorded} record in"
            f" {result.elapsed_s:.0f}s{_warmup_note(m)} (search stopped:"
            f" {result.stop_reason or 'n/a'})"
        )
        if m.device_ceiling_samples_per_s is not None:
            console.print(_ceilings_line(m), highlight=False)
        if m.tied_with:
            console.print(m.tie_note(result.best.config.label()), highlight=False)
        for note in (m.error_note(), m.epoch_note(), m.range_note()):
            if note is not None:
                console.print(note, highlight=False)
        diagnosis = result.best.diagnosis
        if diagnosis is not None:
            print_diagnosis(diagnosis.bottleneck, diagnosis.reason, diagnosis.recommendations)
        if out is not None:
            try:
                result.recipe.save(out)
            except OSError as exc:
                raise OptionsError(f"cannot write recipe to {out}: {exc.strerror or exc}") from None
            console.print(f"recipe: {out}", highlight=False, soft_wrap=True)
    for name, label in (
        ("recipe", "recipe: "),
        ("table_md", "table:  "),
        ("report", "report: "),
        ("failures", "failures: "),
    ):
        if name in result.files:
            console.print(f"{label}{result.files[name]}", highlight=False, soft_wrap=True)


def _interrupted(stop: TuningInterrupted, out: Path | None) -> int:
    result = stop.result
    if result is None:
        err_console.print(f"interrupted by {stop.signal_name} before any trial was measured")
    else:
        _show(result, out)
        where = (
            f"; continue with the same command plus --resume {result.run_dir}"
            if result.run_dir
            else ""
        )
        n = len(result.trials)
        err_console.print(
            f"[bold yellow]interrupted by {stop.signal_name}[/]: {counted(n, 'trial')}"
            f" measured and kept{where}",
            highlight=False,
            soft_wrap=True,
        )
    return stop.exit_code


@one_line_errors
def tune(
    workload: str | None = typer.Argument(
        None,
        help="built-in (demo, photos, fakedata, imagefolder:PATH, sim:k=v,..., mem:k=v,...),"
        " FILE.py:factory or package.module:factory; default: demo",
    ),
    budget: float = typer.Option(60.0, "--budget", help="wall-clock budget in seconds"),
    trials: int | None = typer.Option(
        None,
        "--trials",
        help="at most this many measured trials (with --resume, counting those measured before)",
    ),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda[:index]"),
    out: Path | None = typer.Option(None, "--out", help="also write the recipe here"),
    results_dir: Path = typer.Option(
        Path("results"), "--results-dir", help="folder for run reports"
    ),
    seed: int = typer.Option(0, "--seed", help="seed of the search"),
    early_stop: bool = typer.Option(
        True,
        "--early-stop/--no-early-stop",
        help="end the search at the device ceiling or when nothing"
        " improves (--no-early-stop: only --budget and --trials)",
    ),
    knob: list[str] | None = typer.Option(
        None,
        "--knob",
        metavar="NAME",
        help="search an opt-in knob as well (repeatable): one that"
        " changes what the training sees, e.g. in_order (batches in the order they are ready)",
    ),
    max_workers: int | None = typer.Option(None, "--max-workers", help="cap on num_workers"),
    ram_budget: float | None = typer.Option(
        None,
        "--ram-budget",
        help="MiB the tuner and its workers may use (summed PSS); configurations"
        " estimated above it are skipped, measured above it rejected;"
        " default: half the available RAM",
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        help="continue the tuning in this run folder (results/runs/...): same"
        " WORKLOAD and options; measured configurations are not re-measured",
    ),
    model: str | None = typer.Option(
        None, "--model", help="torchvision model (built-in image workloads)"
    ),
    image_size: int | None = typer.Option(
        None, "--image-size", help="training crop size (built-in image workloads)"
    ),
    batch_size: int | None = typer.Option(
        None, "--batch-size", help="batch size (built-in workloads)"
    ),
    study: str | None = typer.Option(
        None,
        "--study",
        help="join or create this optuna study: any number of processes on any nodes can share one",
    ),
    storage: str | None = typer.Option(
        None,
        "--storage",
        help="study storage: a journal file on"
        " the shared filesystem, or an RDB URL (postgresql://...)",
    ),
    ranks_per_node: int | None = typer.Option(
        None,
        "--ranks-per-node",
        help="measure on this many ranks at once (one node of a"
        " multi-rank job), scored by the slowest rank",
    ),
    target_rate: float | None = typer.Option(
        None,
        "--target-rate",
        metavar="SAMPLES_PER_S",
        help="what-if: replace the step with a simulated accelerator consuming this many samples/s",
    ),
    trace: bool = typer.Option(
        False,
        "--trace",
        help="record a torch.profiler trace of the tuned"
        " configuration (Perfetto, TensorBoard, HTA)",
    ),
    nvtx: bool = typer.Option(
        False, "--nvtx", help="wrap fetch, collate, copy and step in NVTX ranges for `nsys profile`"
    ),
    stages: bool = typer.Option(
        True,
        "--stages/--no-stages",
        help="time the pipeline's stages"
        " (decode, each transform, collate) inside the workers in one short"
        " burst of the tuned configuration, within the budget",
    ),
    debug: bool = DEBUG_OPTION,
) -> None:
    """Measure short training bursts of WORKLOAD over the loader settings; write the best as a
    recipe.

    Ctrl-C or SIGTERM ends the current burst and writes the report of what was measured; continue
    with the same command plus --resume RUN_DIR."""
    options = _options(
        budget_s=budget,
        max_trials=trials,
        early_stop=early_stop,
        knobs=tuple(knob) if knob else None,
        device=device,
        seed=seed,
        max_workers=max_workers,
        results_dir=results_dir,
        storage=storage,
        study_name=study,
        ranks_per_node=ranks_per_node,
        target_rate=target_rate,
        trace=trace,
        nvtx=nvtx,
        stages=stages,
        ram_budget_mib=ram_budget,
        resume=resume,
    )
    if study is not None and storage is None:
        raise OptionsError(
            "--study needs --storage: the journal file or database the processes share"
        )
    try:
        wl_options = WorkloadOptions(
            device=device, model=model, image_size=image_size, batch_size=batch_size
        )
    except ValidationError as exc:
        raise option_error(exc) from None
    console.print(f"[bold]autotune[/]: loading workload {workload or 'demo'} ...")
    work = load_workload(workload, wl_options)
    record_spec(work, workload, wl_options)  # so that `autotune verify` can rebuild it

    columns = (
        TextColumn("[bold]tuning[/] {task.fields[workload]}"),
        BarColumn(),
        TextColumn("{task.fields[done]} trials"),
        TimeElapsedColumn(),
        TextColumn("left {task.fields[left]:.0f}s"),
        TextColumn("best {task.fields[best]}"),
    )
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(
                "tune",
                total=options.budget_s,
                workload=work.name,
                done=0,
                left=options.budget_s,
                best="-",
            )

            def on_trial(p: TuningProgress) -> None:
                best = f"{p.best_samples_per_s:.1f} samples/s" if p.best_samples_per_s else "-"
                bar.update(
                    task,
                    completed=min(p.elapsed_s, p.budget_s),
                    done=p.done,
                    left=max(0.0, p.budget_s - p.elapsed_s),
                    best=best,
                )

            factory = spec_factory(workload, wl_options) if (ranks_per_node or 1) > 1 else None
            result = tune_with(work, options, on_trial=on_trial, workload_factory=factory)
    except TuningInterrupted as stop:
        raise typer.Exit(_interrupted(stop, out)) from None
    _show(result, out)
    _remember(work, result)


def _remember(work: Workload, result: TuneResult) -> None:
    """The recipe goes into the memory of runs: a training of this workload on this machine
    (autotune.DataLoader, `autotune run`) starts at it, without `recipe=`."""
    if result.recipe is None or result.best is None:
        return
    try:
        path = remember_recipe(
            work.make_loader(LoaderConfig()),
            result.recipe,
            str(work.name),
            cuda=str(result.device).startswith("cuda"),
        )
    except Exception as exc:  # noqa: BLE001 - the recipe is written; the memory is a bonus
        err_console.print(f"autotune: the recipe was not remembered: {exc}", highlight=False)
        return
    if path is not None:
        console.print(
            f"remembered for a training of this workload here: {path}",
            highlight=False,
            soft_wrap=True,
        )
