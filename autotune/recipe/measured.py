"""The recipe's measured block, built one way for both drivers: the offline search (recipe/build.py,
from its bursts) and online tuning (online/finish.py, from the training loop's windows).

Each driver passes what it measured, raw; a figure it cannot measure is left out and stays null,
never 0 or an invented 1.0x. The figures derived from others (the speedup over the baseline, the
burst noise in %) and the rounding of every figure are made here, so that both recipes carry them
alike. Every name passed is a declared field of `Measured`: a misspelt one is refused here rather
than dropped on the way into the recipe."""

from __future__ import annotations

from typing import Any, Final

from autotune.recipe.model import Measured

# Decimal places kept of each figure; a figure not listed is kept as given.
DIGITS: Final[dict[str, int]] = {
    "samples_per_s": 2,
    "baseline_samples_per_s": 2,
    "speedup": 3,
    "data_wait_pct": 2,
    "copy_pct": 2,
    "compute_pct": 2,
    "other_pct": 2,
    "device_busy_pct": 1,
    "gpu_util_pct": 1,
    "gpu_mem_peak_mib": 1,
    "host_cpu_pct": 1,
    "peak_rss_mib": 1,
    "peak_pss_mib": 1,
    "startup_s": 3,
    "tuning_s": 1,
    "ram_budget_mib": 1,
    "device_warmup_s": 1,
    "device_ceiling_samples_per_s": 2,
    "loader_ceiling_samples_per_s": 2,
    "ceiling_share": 3,
    "noise_pct": 2,
    "samples_per_s_error_pct": 1,
    "fastest_samples_per_s": 2,
    "tie_band_pct": 2,
    "exploration_cost_s": 3,
    "exploration_cost_pct": 2,
    "steady_samples_per_s": 2,
    "first_batch_s": 3,
    "restart_cost_s": 3,
    "restart_share_pct": 2,
}
DERIVED: Final = frozenset({"speedup", "noise_pct"})


def _rounded(name: str, value: Any) -> Any:
    digits = DIGITS.get(name)
    if digits is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return round(value, digits)


def build_measured(
    *,
    samples_per_s: float | None,
    baseline_samples_per_s: float | None,
    noise_cv: float | None = None,
    data_wait_pct: float | None = None,
    startup_s: float | None = None,
    trials: int | None = None,
    measurements: int | None = None,
    **figures: Any,
) -> Measured:
    """The measured block. `samples_per_s`: the chosen configuration's rate; None where no window
    or burst completed. `baseline_samples_per_s`: the starting configuration's (PyTorch's
    defaults offline, the loader as the user built it online); None where it was not measured,
    and the speedup with it. `noise_cv`: one burst's (or window's) relative standard deviation.
    `figures`: the other fields of `Measured` the driver measured."""
    unknown = sorted(set(figures) - set(Measured.model_fields) | (set(figures) & DERIVED))
    if unknown:
        raise TypeError(f"build_measured: not a measured figure: {', '.join(unknown)}")
    speedup = (
        samples_per_s / baseline_samples_per_s
        if samples_per_s is not None and baseline_samples_per_s
        else None
    )
    fields: dict[str, Any] = dict(
        samples_per_s=samples_per_s,
        baseline_samples_per_s=baseline_samples_per_s,
        speedup=speedup,
        noise_pct=None if noise_cv is None else 100 * noise_cv,
        data_wait_pct=data_wait_pct,
        startup_s=startup_s,
        trials=trials,
        measurements=measurements,
        **figures,
    )
    return Measured.model_validate({k: _rounded(k, v) for k, v in fields.items()})
