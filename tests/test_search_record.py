"""The record: the chosen configuration measured after the choice, as many bursts as its noise
asks for and the budget leaves room for, on a fake clock and fake bursts."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from search_fakes import Clock, burst, cfg

from autotune.decision.thresholds import MAX_RECORD_BURSTS
from autotune.diagnosis import Context
from autotune.recipe.model import RateSource
from autotune.search.assemble import assemble, pick
from autotune.search.budget import Budget
from autotune.search.choose import choose, group
from autotune.search.confirm import MAX_MEASUREMENTS, MEASUREMENTS
from autotune.search.phases import _remeasure
from autotune.search.record import UNKNOWN_NOISE_BURSTS, bursts_needed, record
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import PYTORCH_DEFAULTS


class _Stop:
    requested = False


class _Runner:
    """What record() reads of a trial runner: the stop signals, the budget, and run(), whose
    bursts take `duration_s` of the fake clock and measure the rates given, in turn."""

    def __init__(
        self, budget: Budget, clock: Clock, rates: list[float | None], duration_s: float = 4.0
    ):
        self.stop, self.budget, self.clock = _Stop(), budget, clock
        self.rates, self.duration_s, self.ran = list(rates), duration_s, []

    def run(self, config, phase):
        self.ran.append((config, phase))
        self.clock.now += self.duration_s
        rate = self.rates.pop(0)
        if rate is None:
            return TrialRecord(len(self.ran), config, TrialStatus.FAILED, phase=phase, error="boom")
        done = TrialRecord(
            len(self.ran),
            config,
            TrialStatus.OK,
            phase=phase,
            result=burst(config, rate, duration_s=self.duration_s),
        )
        self.budget.count([done])
        return done


def _budget(clock: Clock, seconds: float = 60.0, burst_s: float = 4.0) -> Budget:
    budget = Budget(seconds, clock=clock)
    budget.count(
        [TrialRecord(0, cfg(2), TrialStatus.OK, result=burst(cfg(2), 1.0, duration_s=burst_s))]
    )
    return budget


def test_the_bursts_needed_bring_the_standard_error_down_to_target_at_the_measured_noise():
    assert bursts_needed([400.0], 0.01) == 1  # quiet: one burst is within 2%
    assert bursts_needed([400.0], 0.03) == 3  # (3% / 2%)^2 = 2.25
    assert bursts_needed([400.0], 0.09) == MAX_RECORD_BURSTS  # past it, the machine's drift
    assert bursts_needed([400.0], None) == UNKNOWN_NOISE_BURSTS  # one burst cannot say its noise
    # the record bursts' own spread counts when it is wider than the re-measurements'
    assert bursts_needed([400.0, 340.0], 0.01) == MAX_RECORD_BURSTS
    assert bursts_needed([400.0, 401.0], None) == 1


def test_the_first_record_burst_runs_whatever_the_budget_left_and_only_a_signal_skips_it():
    clock = Clock()
    budget = _budget(clock, seconds=10.0)
    clock.now += 9.5  # the re-measurements ran into the reserve: the record still runs
    runner = _Runner(budget, clock, [400.0, 400.0])
    record(runner, cfg(2), noise_cv=0.09)  # noisy, but no time left for a second burst
    assert runner.ran == [(cfg(2), Phase.RECORD)]
    runner.stop.requested = True
    record(runner, cfg(3), noise_cv=0.09)
    assert runner.ran == [(cfg(2), Phase.RECORD)]


def test_a_noisy_configuration_is_recorded_in_more_bursts_while_a_slow_one_still_fits():
    clock = Clock()
    runner = _Runner(_budget(clock), clock, [400.0, 380.0, 390.0, 395.0, 999.0])
    record(runner, cfg(2), noise_cv=0.05)
    assert len(runner.ran) == MAX_RECORD_BURSTS  # never more, however noisy
    clock = Clock()
    budget = _budget(clock)
    clock.now += 60.0 - 4.0 - 1.5 * 4.0 - 1.0  # room for the first and one slow burst after it
    runner = _Runner(budget, clock, [400.0, 380.0, 390.0])
    record(runner, cfg(2), noise_cv=0.05)
    assert len(runner.ran) == 2


def test_a_quiet_configuration_is_recorded_once_and_a_failed_burst_ends_the_record():
    clock = Clock()
    runner = _Runner(_budget(clock), clock, [400.0, 400.0])
    record(runner, cfg(2), noise_cv=0.005)
    assert len(runner.ran) == 1
    runner = _Runner(_budget(clock), clock, [400.0, None, 400.0])
    record(runner, cfg(2), noise_cv=0.05)
    assert len(runner.ran) == 2


def test_the_recipe_records_the_record_bursts_work_over_their_time():
    ts = [TrialRecord(0, PYTORCH_DEFAULTS, TrialStatus.OK, result=burst(PYTORCH_DEFAULTS, 100.0))]
    for rate, phase in ((420.0, Phase.SEARCH), (410.0, Phase.CONFIRM), (406.0, Phase.CONFIRM)):
        ts.append(
            TrialRecord(len(ts), cfg(2), TrialStatus.OK, result=burst(cfg(2), rate), phase=phase)
        )
    for rate, window_s in ((380.0, 3.0), (400.0, 1.0)):  # a slow piece weighs by its seconds
        result = replace(burst(cfg(2), rate), window_s=window_s)
        ts.append(TrialRecord(len(ts), cfg(2), TrialStatus.OK, result=result, phase=Phase.RECORD))
    for rate, phase in ((300.0, Phase.SEARCH), (305.0, Phase.CONFIRM)):
        ts.append(
            TrialRecord(len(ts), cfg(1), TrialStatus.OK, result=burst(cfg(1), rate), phase=phase)
        )
    outcome = pick(ts)
    assert outcome.choice.chosen.mean == pytest.approx(408.0)  # the record bursts chose nothing
    assemble(
        outcome,
        Context(usable_cpus=2, max_workers=8),
        workload={"name": "fake"},
        device=torch.device("cpu"),
    )
    m = outcome.recipe.measured
    assert (
        m.samples_per_s == pytest.approx((380.0 * 3 + 400.0) / 4)
        and m.rate_from == RateSource.RECORD
    )
    assert m.measurements == 2


def test_more_record_bursts_leave_time_for_the_loader_probe_the_report_reads():
    clock = Clock()
    budget = _budget(clock)
    clock.now += 60.0 - 4.0 - 1.5 * 4.0 - 1.0  # room for the first and one slow burst after it
    runner = _Runner(budget, clock, [400.0, 380.0])
    record(runner, cfg(2), noise_cv=0.05, after_s=2.0)  # but not with a 2 s probe after it
    assert len(runner.ran) == 1


class _ConfirmRunner(_Runner):
    """What the re-measurements read besides: every trial so far, the new ones appended."""

    def __init__(self, budget: Budget, clock: Clock, rates: list[float | None]):
        super().__init__(budget, clock, rates)
        self.trials = [
            TrialRecord(-i, c, TrialStatus.OK, result=burst(c, r), phase=Phase.SEARCH)
            for i, (c, r) in enumerate(((cfg(2), 400.0), (cfg(4), 396.0)))
        ]

    def all_trials(self):
        return self.trials

    def run(self, config, phase):
        done = super().run(config, phase)
        self.trials.append(done)
        return done


def test_the_re_measurements_leave_the_record_the_bursts_the_noise_calls_for():
    runs = {}
    for name, rates in (
        ("quiet", [400.0, 396.0] * 5),
        ("noisy", [340.0, 338.0, 410.0, 405.0, 345.0, 342.0, 405.0, 400.0, 350.0, 345.0]),
    ):
        clock = Clock()
        runner = _ConfirmRunner(_budget(clock, seconds=50.0), clock, rates)
        _remeasure(runner, [cfg(2), cfg(4)], MAX_MEASUREMENTS)
        runs[name] = runner
    quiet, noisy = runs["quiet"], runs["noisy"]
    assert len(quiet.ran) == 10  # one record burst kept back: every round fits
    # ~9% noise: the record needs MAX_RECORD_BURSTS, and the re-measurements stop short of them
    assert bursts_needed([], choose(group(noisy.trials)).noise_cv) == MAX_RECORD_BURSTS
    assert len(noisy.ran) < 10
    assert noisy.budget.time_left() >= noisy.budget.record_reserve(MAX_RECORD_BURSTS)
    noisy.rates = [380.0, 395.0, 360.0, 400.0]
    record(noisy, cfg(2), noise_cv=choose(group(noisy.trials)).noise_cv)
    assert [p for _, p in noisy.ran].count(Phase.RECORD) == MAX_RECORD_BURSTS


def test_the_first_round_keeps_back_only_the_first_record_burst_so_the_choice_rests_on_two():
    # ~13% noise calls for four record bursts; kept back from the first round on a short budget,
    # they left the choice on one burst of a contender (a 25 s tuning at 3.6% noise in CI)
    ran = {}
    for measurements in (MEASUREMENTS, MEASUREMENTS + 1):  # the first round, then a tie round
        clock = Clock()
        runner = _ConfirmRunner(_budget(clock, seconds=26.0), clock, [400.0, 396.0])
        runner.trials += [
            TrialRecord(9, cfg(3), TrialStatus.OK, result=burst(cfg(3), 340.0), phase=Phase.SEARCH),
            TrialRecord(
                10, cfg(3), TrialStatus.OK, result=burst(cfg(3), 410.0), phase=Phase.CONFIRM
            ),
        ]
        assert bursts_needed([], choose(group(runner.trials)).noise_cv) == MAX_RECORD_BURSTS
        _remeasure(runner, [cfg(2), cfg(4)], measurements)
        ran[measurements] = [c for c, _ in runner.ran]
    assert ran[MEASUREMENTS] == [cfg(2), cfg(4)]  # the first round whole: one record burst kept
    assert ran[MEASUREMENTS + 1] == [cfg(2)]  # a tie round keeps back the four the noise asks for


def test_the_record_plans_for_the_chosen_configurations_own_scatter_where_it_is_wider():
    # a stable pool beside a shallow one that scatters: the pooled noise is small, the chosen
    # shallow pool's own re-measurements are not
    def trials(c, rates):
        return [
            TrialRecord(
                i,
                c,
                TrialStatus.OK,
                result=burst(c, r),
                phase=Phase.SEARCH if i == 0 else Phase.CONFIRM,
            )
            for i, r in enumerate(rates)
        ]

    stable = trials(cfg(8), [680.0, 679.0, 681.0, 680.0, 679.5, 680.5, 680.0])
    shallow = trials(cfg(4), [690.0, 700.0, 640.0])
    choice = choose(group(stable + shallow))
    assert choice.chosen.config == cfg(4)  # cheaper, tied at the pooled noise
    assert choice.noise_cv < 0.05 < choice.record_noise_cv
    assert (
        bursts_needed([], choice.noise_cv)
        < bursts_needed([], choice.record_noise_cv)
        == MAX_RECORD_BURSTS
    )
