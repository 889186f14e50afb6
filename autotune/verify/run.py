"""`autotune verify`: re-measure a recipe's configuration and PyTorch's defaults on the workload, in
long alternating windows, and compare with what the recipe recorded."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Callable

import torch

from autotune.burst.watchdog import BurstTimeout
from autotune.errors import AutotuneError, OptionsError, RecipeError, WorkloadError
from autotune.recipe.model import Recipe
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.verify.model import Verification, VerifiedConfig
from autotune.verify.source import Located, differences, load, rebuild_workload
from autotune.verify.steady import (
    DEFAULT_ROUNDS,
    DEFAULT_SECONDS,
    SETTLE_S,
    OnResult,
    alternate,
    summarize,
)
from autotune.workload.base import Workload
from autotune.workload.device import device_for


def check_settings(seconds: float, rounds: int, settle_s: float) -> None:
    if not seconds > 0:
        raise OptionsError(f"--seconds must be > 0, got {seconds:g}")
    if rounds < 1:
        raise OptionsError(f"--rounds must be >= 1, got {rounds}")
    if settle_s < 0:
        raise OptionsError(f"--settle must be >= 0, got {settle_s:g}")


def check_runnable(config: LoaderConfig, device: torch.device) -> None:
    cuda_only = [p for p in config.problems(cuda=device.type == "cuda") if "CUDA" in p]
    if cuda_only:
        raise OptionsError(
            f"the recipe's configuration ({config.label()}) cannot run on {device}:"
            f" {'; '.join(cuda_only)}; verify it where a CUDA device is present"
        )


def _source(source: Any) -> tuple[Recipe, Located | None, Workload | None, torch.device | None]:
    """(recipe, where it lives, the tuned workload and device when `source` is a TuneResult)."""
    if isinstance(source, Recipe):
        return source, None, None, None
    if isinstance(source, (str, Path)):
        recipe, where = load(source)
        return recipe, where, None, None
    tuned = getattr(source, "recipe", None)
    if isinstance(tuned, Recipe) and isinstance(getattr(source, "workload", None), Workload):
        run_dir = getattr(source, "run_dir", None)
        located = (
            Located(Path(run_dir) / "recipe.json", Path(run_dir), "verify") if run_dir else None
        )
        return tuned, located, source.workload, getattr(source, "device", None)
    if hasattr(source, "recipe"):
        raise RecipeError("this tuning produced no recipe: nothing was measured successfully")
    raise RecipeError(
        f"cannot verify a {type(source).__name__}: give a run folder, a recipe file,"
        " a Recipe or a TuneResult"
    )


def verify(
    source: Any,
    workload: Workload | str | None = None,
    *,
    seconds: float = DEFAULT_SECONDS,
    rounds: int = DEFAULT_ROUNDS,
    device: str = "auto",
    settle_s: float = SETTLE_S,
    out_dir: str | Path | None = None,
    write: bool = True,
    on_result: OnResult | None = None,
    on_start: Callable[[Workload, torch.device, list[LoaderConfig]], None] | None = None,
) -> Verification:
    """Re-measure a recipe's configuration and PyTorch's defaults on its workload.

    `source`: a run folder (`results/runs/...`), a recipe file, a `Recipe`, or the `TuneResult`
    that `autotune.tune()` returned. `workload`: a `Workload` or a spec string (`sim:...`,
    `file.py:factory`); default: the workload the recipe records (from `autotune tune`), or the
    TuneResult's own. Both configurations are measured `rounds` times, alternating, each in a
    plain training loop (autotune.verify.steady) with a `seconds` window after a settle phase.

    Writes verify.json and verify.md into the run folder (or `<recipe>.verify.*` beside a recipe
    file, or into `out_dir`) unless `write=False`. `on_start(workload, device, configs)` is
    called once everything is checked, before measuring; `on_result(round, SteadyResult)` after
    each window. Raises RecipeError / WorkloadError /
    OptionsError (one-line messages) on bad input."""
    check_settings(seconds, rounds, settle_s)
    recipe, where, tuned_workload, tuned_device = _source(source)
    shown = str(where.recipe_path) if where is not None else "the recipe"
    if isinstance(workload, Workload):
        work, spec = workload, workload.name or "workload"
    elif workload is None and tuned_workload is not None:
        work, spec = tuned_workload, tuned_workload.name or "workload"
    else:
        work, spec = rebuild_workload(recipe, workload, device=device, shown=shown)
    dev = (
        tuned_device
        if (tuned_device is not None and work is tuned_workload)
        else device_for(work.device, device)
    )
    config = recipe.config
    check_runnable(config, dev)
    configs = [config] + ([PYTORCH_DEFAULTS] if config != PYTORCH_DEFAULTS else [])
    if on_start is not None:
        on_start(work, dev, configs)
    rates = _measure(work, dev, configs, seconds, rounds, settle_s, on_result)
    summaries = summarize(rates)

    m = recipe.measured
    tuned = VerifiedConfig.from_summary("tuned", summaries[config], m.samples_per_s)
    defaults = (
        VerifiedConfig.from_summary(
            "defaults", summaries[PYTORCH_DEFAULTS], m.baseline_samples_per_s
        )
        if PYTORCH_DEFAULTS in summaries and config != PYTORCH_DEFAULTS
        else None
    )
    cpus = usable_cpus().count
    notes = differences(recipe, work)
    recorded_cpus = recipe.environment.get("usable_cpus")
    if isinstance(recorded_cpus, int) and recorded_cpus != cpus:
        notes.append(f"{cpus} usable CPUs here, {recorded_cpus} where the recipe was measured")
    result = Verification(
        recipe=None if where is None else str(where.recipe_path),
        workload=spec,
        workload_name=work.name,
        device=str(dev),
        usable_cpus=cpus,
        seconds=seconds,
        rounds=rounds,
        settle_s=settle_s,
        tuned=tuned,
        defaults=defaults,
        recorded_samples_per_s=m.samples_per_s,
        recorded_error_pct=m.samples_per_s_error_pct,
        verified_samples_per_s=round(tuned.median, 2),
        difference_pct=None if tuned.difference_pct is None else round(tuned.difference_pct, 2),
        recorded_speedup=m.speedup,
        verified_speedup=_speedup(tuned, defaults),
        notes=notes,
    )
    if write:
        target = Path(out_dir) if out_dir is not None else (where.out_dir if where else None)
        if target is not None:
            stem = where.stem if (where is not None and out_dir is None) else "verify"
            try:
                result.write(target, stem)
            except OSError as exc:
                raise OptionsError(
                    f"cannot write the findings to {target}: {exc.strerror or exc}; pass --out DIR"
                ) from None
    return result


def _speedup(tuned: VerifiedConfig, defaults: VerifiedConfig | None) -> float | None:
    if defaults is None:  # the recipe is PyTorch's defaults
        return 1.0
    return round(tuned.median / defaults.median, 3) if defaults.median else None


def _measure(
    workload: Workload,
    device: torch.device,
    configs: list[LoaderConfig],
    seconds: float,
    rounds: int,
    settle_s: float,
    on_result: OnResult | None,
) -> dict[LoaderConfig, list[float]]:
    try:
        return alternate(
            workload, device, configs, seconds, rounds, settle_s=settle_s, on_result=on_result
        )
    except AutotuneError:
        raise
    except BurstTimeout as exc:
        raise WorkloadError(f"workload '{workload.name}': {exc}") from None
    except Exception as exc:
        raise WorkloadError(
            f"workload '{workload.name}' failed while being measured: {type(exc).__name__}: {exc}",
            detail=traceback.format_exc(),
        ) from None
