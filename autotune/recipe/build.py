"""Turn the chosen trial and the baseline into a Recipe."""

from __future__ import annotations

from typing import Any

import torch

from autotune import environment
from autotune.burst.result import BurstResult
from autotune.diagnosis.split import split_step
from autotune.recipe.measured import build_measured
from autotune.recipe.model import Measured, Recipe


def measured_block(
    best: BurstResult,
    baseline: BurstResult | None,
    *,
    samples_per_s: float | None = None,
    **figures: Any,
) -> Measured:
    """`best` is the burst whose details are shown; `samples_per_s`, when given, is the chosen
    configuration's mean over all its measurements (otherwise `best`'s own rate); `baseline`,
    PyTorch's defaults' burst (None: not measured, and no speedup); `figures`, the search's own
    (recipe/measured.py)."""
    split = split_step(best)
    host = best.host
    return build_measured(
        samples_per_s=best.samples_per_s if samples_per_s is None else samples_per_s,
        baseline_samples_per_s=None if baseline is None else baseline.samples_per_s,
        data_wait_pct=split.wait_pct,
        copy_pct=split.copy_pct,  # null on a CPU-only run: no copy to a device happens
        compute_pct=split.compute_pct,
        other_pct=split.other_pct,
        device_busy_pct=None
        if best.device_busy_s is None
        else 100 * best.device_busy_s / best.window_s,
        gpu_util_pct=None if best.gpu is None else best.gpu.util_mean_pct,
        gpu_mem_peak_mib=None if best.gpu is None else best.gpu.mem_peak_mib,
        host_cpu_pct=host.cpu_pct,
        peak_rss_mib=host.peak_rss_mib,
        peak_pss_mib=host.peak_pss_mib,
        startup_s=best.startup_s,
        steady_samples_per_s=best.steady_rate,
        first_batch_s=best.first_batch_s,
        restart_cost_s=best.restart_cost_s,
        restart_share_pct=100 * best.restart_share,
        epoch_samples=best.epoch_samples,
        **figures,
    )


def build_recipe(
    best: BurstResult,
    baseline: BurstResult | None,
    workload: dict[str, Any],
    device: torch.device,
    *,
    environment_block: dict[str, Any] | None = None,
    diagnosis: dict[str, Any] | None = None,
    **figures: Any,
) -> Recipe:
    """`environment_block`: where `best` was measured (default: this process, now); `figures`:
    the search's figures for the measured block (measured_block)."""
    return Recipe.from_config(
        best.config,
        measured=measured_block(best, baseline, **figures),
        workload=workload,
        environment=environment_block or environment.collect(device),
        diagnosis=diagnosis,
    )
