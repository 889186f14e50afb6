"""The assembly a merged shared study shares with the tuner, and the tuning's budget clock."""

from __future__ import annotations

import pytest
import torch
from search_fakes import Clock, burst, cfg

from autotune.cluster.merge import merge
from autotune.decision.rate import error_pct
from autotune.diagnosis import Context
from autotune.recipe.model import Measured, RateSource
from autotune.search.assemble import assemble, pick
from autotune.search.budget import SAFETY, Budget
from autotune.search.options import BurstOptions
from autotune.search.study import describe_study, open_study
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.search.trial_runner import keep_remeasurement, tell
from autotune.space.config import PYTORCH_DEFAULTS

# (config, rate of the search burst, rates of its re-measurements)
MEASURED = (
    (PYTORCH_DEFAULTS, 100.0, ()),
    (cfg(2), 400.0, (380.0, 390.0)),
    (cfg(4), 405.0, (395.0, 385.0)),
)


def _shared_study(storage: str, name: str) -> None:
    """A study as tuners sharing it leave it: search trials told, then re-measurements added."""
    study = open_study(seed=0, storage=storage, study_name=name)
    describe_study(study, {"name": "fake", "batch_size": 8}, "cpu")
    number = 0
    for config, rate, _ in MEASURED:
        tell(
            study,
            study.ask(),
            TrialRecord(number, config, TrialStatus.OK, result=burst(config, rate)),
            over_mib=-100.0,
        )
        number += 1
    for config, _, again in MEASURED:
        for rate in again:
            again_record = TrialRecord(
                number, config, TrialStatus.OK, phase=Phase.CONFIRM, result=burst(config, rate)
            )
            keep_remeasurement(study, again_record, over_mib=-100.0)
            number += 1


def test_a_merged_recipe_carries_the_noise_the_measurements_and_a_diagnosis(tmp_path):
    storage = str(tmp_path / "shared.journal")
    _shared_study(storage, "shared")
    (report,) = merge(storage, "shared")
    recipe = report.recipe
    assert recipe is not None and report.baseline.config == PYTORCH_DEFAULTS
    m = recipe.measured
    assert m.noise_pct is not None and m.noise_pct > 0
    assert m.measurements == 2  # the two re-measurements: the search burst was selected for luck
    assert m.fastest_samples_per_s is not None and m.ties_resolved is not None
    assert m.trials == 3 and m.remeasured == 4
    assert recipe.diagnosis is not None and recipe.diagnosis.recommendations is not None
    assert recipe.environment["study"] == "shared"
    assert all(t.diagnosis is not None for t in report.trials if t.ok)


def test_budget_on_a_fake_clock():
    clock = Clock()
    budget = Budget(60.0, clock=clock)
    assert budget.time_left() == 60.0 and budget.fits_another()
    ran = burst(PYTORCH_DEFAULTS, 1.0, duration_s=10.0)
    budget.count(
        [
            TrialRecord(0, PYTORCH_DEFAULTS, TrialStatus.OK, result=ran),
            TrialRecord(1, cfg(1), TrialStatus.SKIPPED),
        ]
    )  # skipped: no burst, no time
    assert budget.durations == [10.0] and budget.next_burst_estimate() == 10.0
    clock.now += 60.0 - SAFETY * 10.0
    assert budget.elapsed() == pytest.approx(45.0) and budget.fits_another()
    assert not budget.search_fits()  # the re-measurements' reserve is no longer left over
    clock.now += 1.0
    assert not budget.fits_another()
    assert budget.window_cap(min_seconds=2.0) == pytest.approx(14.0 * 0.8 / 1.5)  # 14 s left
    assert budget.window_cap(min_seconds=10.0) == 10.0  # never under the window's minimum


def test_the_reserve_fits_two_re_measurements_and_the_record_burst_however_slow_the_bursts():
    clock = Clock()
    budget = Budget(60.0, clock=clock)
    budget.count(
        [
            TrialRecord(0, cfg(2), TrialStatus.OK, result=burst(cfg(2), 1.0, duration_s=d))
            for d in (6.0, 6.0, 9.0)
        ]
    )
    # 30% of the budget (18 s) fitted one re-measurement of bursts this slow: the floor is the two
    # fastest at the typical duration, the safety margin on the longest, and the record's reserve
    # (a slow burst, with its margin).
    assert budget.record_reserve() == pytest.approx(SAFETY * 9.0)
    # where the noise calls for more record bursts, each further one is a slow burst's time
    assert budget.record_reserve(3) == pytest.approx(SAFETY * 9.0 + 2 * 9.0)
    assert budget.confirm_reserve() == pytest.approx(2 * 6.0 + (SAFETY - 1) * 9.0 + SAFETY * 9.0)
    clock.now += 60.0 - 2 * SAFETY * 9.0  # room for a slow re-measurement and the record after it
    assert budget.fits_before_record()
    clock.now += 0.5
    assert budget.fits_another() and not budget.fits_before_record()


def test_the_record_window_runs_to_its_longest():
    options = BurstOptions()
    assert options.settings(2.0).min_seconds == options.min_seconds < 2.0
    full = options.settings(2.0, full_window=True)
    assert full.min_seconds == full.max_seconds == 2.0


def test_the_recipe_records_the_burst_measured_after_the_choice():
    ts = [TrialRecord(0, PYTORCH_DEFAULTS, TrialStatus.OK, result=burst(PYTORCH_DEFAULTS, 100.0))]
    for rate, phase in (
        (420.0, Phase.SEARCH),
        (410.0, Phase.CONFIRM),
        (406.0, Phase.CONFIRM),
        (380.0, Phase.RECORD),
    ):
        ts.append(
            TrialRecord(len(ts), cfg(2), TrialStatus.OK, result=burst(cfg(2), rate), phase=phase)
        )
    for rate, phase in ((300.0, Phase.SEARCH), (305.0, Phase.CONFIRM)):
        ts.append(
            TrialRecord(len(ts), cfg(1), TrialStatus.OK, result=burst(cfg(1), rate), phase=phase)
        )
    outcome = pick(ts)
    assert outcome.choice.chosen.config == cfg(2)
    assert outcome.choice.chosen.mean == pytest.approx(408.0)  # the record burst chose nothing
    assemble(
        outcome,
        Context(usable_cpus=2, max_workers=8),
        workload={"name": "fake"},
        device=torch.device("cpu"),
    )
    m = outcome.recipe.measured
    assert m.samples_per_s == pytest.approx(380.0) and m.rate_from == RateSource.RECORD
    assert m.measurements == 1
    # One record burst: its error is the measured burst noise alone, two standard errors of it.
    noise = outcome.choice.noise_cv
    assert noise is not None and m.samples_per_s_error_pct == pytest.approx(200 * noise, abs=0.05)
    assert "longer --budget" in m.error_note()
    without = pick([t for t in ts if t.phase != Phase.RECORD])
    assemble(
        without,
        Context(usable_cpus=2, max_workers=8),
        workload={"name": "fake"},
        device=torch.device("cpu"),
    )
    m = without.recipe.measured
    assert m.samples_per_s == pytest.approx(408.0) and m.rate_from == RateSource.REMEASURED
    assert m.measurements == 2
    expected = error_pct([410.0, 406.0], without.choice.noise_cv)
    assert m.samples_per_s_error_pct == pytest.approx(expected, abs=0.05)


def test_the_error_note_says_how_far_the_figure_may_be_off_and_asks_for_time_only_when_wide():
    base = dict(samples_per_s=1.0, baseline_samples_per_s=1.0, speedup=1.0, noise_pct=4.0)
    narrow = Measured(**base, measurements=4, samples_per_s_error_pct=4.0).error_note()
    assert "±4.0%" in narrow and "4 bursts" in narrow and "--budget" not in narrow
    wide = Measured(**base, measurements=1, samples_per_s_error_pct=8.0).error_note()
    assert "±8.0%" in wide and "1 burst of it" in wide and "longer --budget" in wide
    noisy = Measured(**base, measurements=4, samples_per_s_error_pct=9.0).error_note()
    assert "scatter that much" in noisy and "--budget" not in noisy  # more bursts are not taken
    assert Measured(**base, measurements=1).error_note() is None  # noise unknown: no claim
