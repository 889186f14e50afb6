"""The assembly a merged shared study shares with the tuner, and the tuning's budget clock."""

from __future__ import annotations

import pytest

from autotune.cluster.merge import merge
from autotune.search.budget import SAFETY, Budget
from autotune.search.study import describe_study, open_study
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.search.trial_runner import keep_remeasurement, tell
from autotune.space.config import PYTORCH_DEFAULTS

from search_fakes import burst, cfg

# (config, rate of the search burst, rates of its re-measurements)
MEASURED = ((PYTORCH_DEFAULTS, 100.0, ()), (cfg(2), 400.0, (380.0, 390.0)),
            (cfg(4), 405.0, (395.0, 385.0)))


def _shared_study(storage: str, name: str) -> None:
    """A study as tuners sharing it leave it: search trials told, then re-measurements added."""
    study = open_study(seed=0, storage=storage, study_name=name)
    describe_study(study, {"name": "fake", "batch_size": 8}, "cpu")
    number = 0
    for config, rate, _ in MEASURED:
        tell(study, study.ask(), TrialRecord(number, config, TrialStatus.OK,
                                             result=burst(config, rate)), over_mib=-100.0)
        number += 1
    for config, _, again in MEASURED:
        for rate in again:
            again_record = TrialRecord(number, config, TrialStatus.OK, phase=Phase.CONFIRM,
                                       result=burst(config, rate))
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
    assert m.trials == 3 and m.model_extra["remeasured"] == 4
    assert recipe.diagnosis is not None and recipe.diagnosis.recommendations is not None
    assert recipe.environment["study"] == "shared"
    assert all(t.diagnosis is not None for t in report.trials if t.ok)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_budget_on_a_fake_clock():
    clock = Clock()
    budget = Budget(60.0, clock=clock)
    assert budget.time_left() == 60.0 and budget.fits_another()
    ran = burst(PYTORCH_DEFAULTS, 1.0, duration_s=10.0)
    budget.count([TrialRecord(0, PYTORCH_DEFAULTS, TrialStatus.OK, result=ran),
                  TrialRecord(1, cfg(1), TrialStatus.SKIPPED)])  # skipped: no burst, no time
    assert budget.durations == [10.0] and budget.next_burst_estimate() == 10.0
    clock.now += 60.0 - SAFETY * 10.0
    assert budget.elapsed() == pytest.approx(45.0) and budget.fits_another()
    assert not budget.search_fits()  # the re-measurements' reserve is no longer left over
    clock.now += 1.0
    assert not budget.fits_another()
    assert budget.window_cap(min_seconds=2.0) == pytest.approx(14.0 * 0.8 / 1.5)  # 14 s left
    assert budget.window_cap(min_seconds=10.0) == 10.0  # never under the window's minimum
