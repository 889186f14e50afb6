"""Turn the chosen trial and the baseline into a Recipe."""

from __future__ import annotations

from typing import Any

import torch

from autotune import environment
from autotune.burst.result import BurstResult
from autotune.diagnosis.split import split_step
from autotune.recipe.model import Recipe


def _pct(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def measured_block(
    best: BurstResult,
    baseline: BurstResult | None,
    *,
    samples_per_s: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """`best` is the burst whose details are shown; `samples_per_s`, when given, is the chosen
    configuration's mean over all its measurements (otherwise `best`'s own rate)."""
    split = split_step(best)
    rate = best.samples_per_s if samples_per_s is None else samples_per_s
    base_rate = baseline.samples_per_s if baseline else rate
    return {
        "samples_per_s": round(rate, 2),
        "baseline_samples_per_s": round(base_rate, 2),
        "speedup": round(rate / base_rate, 3) if base_rate > 0 else None,
        "data_wait_pct": _pct(split.wait_pct),
        "copy_pct": _pct(split.copy_pct),  # null on a CPU-only run: no copy to a device happens
        "compute_pct": _pct(split.compute_pct),
        "other_pct": _pct(split.other_pct),
        "device_busy_pct": None
        if best.device_busy_s is None
        else round(100 * best.device_busy_s / best.window_s, 1),
        "gpu_util_pct": None if best.gpu is None else round(best.gpu.util_mean_pct, 1),
        "gpu_mem_peak_mib": None if best.gpu is None else round(best.gpu.mem_peak_mib, 1),
        "host_cpu_pct": round(best.host.cpu_pct, 1),
        "peak_rss_mib": round(best.host.peak_rss_mib, 1),
        "peak_pss_mib": round(best.host.peak_pss_mib, 1),
        "startup_s": round(best.startup_s, 3),
        "steady_samples_per_s": round(best.steady_rate, 2),
        "first_batch_s": None if best.first_batch_s is None else round(best.first_batch_s, 3),
        "restart_cost_s": round(best.restart_cost_s, 3),
        "restart_share_pct": round(100 * best.restart_share, 2),
        "epoch_samples": best.epoch_samples,
        **extra,
    }


def build_recipe(
    best: BurstResult,
    baseline: BurstResult | None,
    workload: dict[str, Any],
    device: torch.device,
    *,
    environment_block: dict[str, Any] | None = None,
    diagnosis: dict[str, Any] | None = None,
    **measured_extra: Any,
) -> Recipe:
    """`environment_block`: where `best` was measured (default: this process, now)."""
    return Recipe.from_config(
        best.config,
        measured=measured_block(best, baseline, **measured_extra),
        workload=workload,
        environment=environment_block or environment.collect(device),
        diagnosis=diagnosis,
    )
