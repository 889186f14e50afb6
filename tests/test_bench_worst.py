"""The bench reports the worst of its tunings, measure by measure: judged on fake figures."""

from __future__ import annotations

import pytest

from autotune.space.config import LoaderConfig
from benchmarks.targets import evaluate
from benchmarks.worst import TuningFigures, spread, worst_of

W2, W3, W4 = (LoaderConfig(num_workers=n, prefetch_factor=2) for n in (2, 3, 4))


def _fig(seed, config, *, tune_s=20.0, recorded=100.0, sbs=100.0, grid=100.0, verified=100.0):
    return TuningFigures(
        seed=seed,
        config=config,
        tune_s=tune_s,
        recorded_samples_per_s=recorded,
        side_by_side_samples_per_s=sbs,
        grid_best_samples_per_s=grid,
        verified_samples_per_s=verified,
    )


def test_each_measure_picks_its_own_worst_tuning():
    figs = [
        _fig(0, W3, tune_s=30, sbs=99, recorded=103, verified=100),  # +3% off
        _fig(1, W2, tune_s=45, sbs=95, recorded=95, verified=96),  # slowest tuning
        _fig(2, W4, tune_s=20, sbs=98, recorded=90, verified=100),
    ]  # -10% off
    worst = worst_of(figs)
    assert worst.tuned_vs_grid.seed == 1 and worst.tuned_vs_grid.tuned_vs_grid == pytest.approx(
        0.95
    )
    assert worst.tune_s.seed == 1
    assert worst.recorded_vs_verified.seed == 2  # the largest in size, though below verified
    assert worst.recorded_vs_verified.recorded_vs_verified == pytest.approx(-0.10)
    assert worst.spread == pytest.approx((99 - 95) / 99)
    assert worst.roles() == {1: ["tuned_vs_grid", "tune_s"], 2: ["recorded_vs_verified"]}


def test_not_the_mean_one_bad_tuning_decides():
    figs = [_fig(0, W3, sbs=100), _fig(1, W3, sbs=100), _fig(2, W2, sbs=90)]
    worst = worst_of(figs)
    assert worst.tuned_vs_grid.tuned_vs_grid == pytest.approx(0.90)  # the mean would be 0.967
    targets = evaluate(
        tuned_vs_grid=worst.tuned_vs_grid.tuned_vs_grid,
        tune_s=worst.tune_s.tune_s,
        budget_s=60,
        grid_s=300,
        grid_exhaustive=False,
        tuned_workers=[f.config.num_workers for f in figs],
        usable_cpus=2,
        compute_bound=False,
        beyond_cores_faster=False,
        stability_diff=worst.spread,
        recorded_vs_verified=worst.recorded_vs_verified.recorded_vs_verified,
    )
    assert targets["tuned_vs_grid"] is False and targets["stable"] is False
    assert targets["recorded_vs_verified"] is True and targets["within_budget"] is True


def test_ties_go_to_the_lowest_seed_whatever_the_order():
    figs = [_fig(2, W2), _fig(0, W3), _fig(1, W4)]
    worst = worst_of(figs)
    assert (worst.tuned_vs_grid.seed, worst.tune_s.seed, worst.recorded_vs_verified.seed) == (
        0,
        0,
        0,
    )
    assert worst.spread == 0.0


def test_unverified_tunings_are_not_judged_on_recorded_vs_verified():
    figs = [_fig(0, W2, verified=None), _fig(1, W3, recorded=110, verified=100)]
    assert worst_of(figs).recorded_vs_verified.seed == 1
    assert worst_of([_fig(0, W2, verified=None)]).recorded_vs_verified is None
    with pytest.raises(ValueError):
        worst_of([])


def test_spread_is_relative_to_the_fastest():
    assert spread([100.0, 97.0, 99.0]) == pytest.approx(0.03)
    assert spread([0.0, 0.0]) == 0.0
