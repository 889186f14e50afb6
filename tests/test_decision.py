"""The one decision core (autotune/decision/): one way to average a rate, one cost order, one
worker range, and the offline search and the online climb both reading them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from search_fakes import burst

from autotune.decision import cost as cost_module
from autotune.decision import drift
from autotune.decision import rate as rate_module
from autotune.decision import verdict as verdict_module
from autotune.decision.cost import cost
from autotune.decision.rate import error_pct, measured_cv, pooled_rate
from autotune.decision.thresholds import Z
from autotune.decision.worker_range import Evidence, WorkerRange, growth_stop, still_rising
from autotune.online.climb_types import ClimbSettings
from autotune.online.measurement import Measurement
from autotune.search.choose import Candidate
from autotune.search.search_range import SearchRange
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace


def test_a_rate_is_the_work_over_the_time_not_a_mean_of_rates():
    # 10 s at 100/s and 1 s at 1000/s: 2,000 samples in 11 s, not (100 + 1000) / 2
    assert pooled_rate([100.0, 1000.0], [10.0, 1.0]) == pytest.approx(2000 / 11)
    assert pooled_rate([5.0, 7.0], [0.0, 0.0]) == 6.0  # no spans known: each piece weighs alike


def test_offline_bursts_and_online_windows_average_alike():
    config = LoaderConfig(num_workers=2, prefetch_factor=2)
    trials = []
    for i, (rate, span) in enumerate([(100.0, 10.0), (1000.0, 1.0)]):
        b = replace(burst(config, rate), window_s=span)
        trials.append(TrialRecord(i, config, TrialStatus.OK, result=b, phase=Phase.CONFIRM))
    online = Measurement(config, rates=[100.0, 1000.0], spans=[10.0, 1.0])
    assert Candidate(config, tuple(trials)).mean == pytest.approx(online.mean)
    assert online.mean == pytest.approx(2000 / 11)


def test_one_cost_order_with_the_measured_ram_between_prefetch_and_pinning():
    small = LoaderConfig(num_workers=2, prefetch_factor=2, pin_memory=True)
    pinned_lean = cost(small, 500.0)
    unpinned_fat = cost(LoaderConfig(num_workers=2, prefetch_factor=2), 900.0)
    assert pinned_lean < unpinned_fat  # RAM ranks before pinning
    assert (
        cost(LoaderConfig(num_workers=1, prefetch_factor=8), 4000.0) < pinned_lean
    )  # workers first
    assert cost(small, None) == cost(small, 0.4)  # unmeasured RAM compares as equal
    assert cost(small, 500.4) == cost(small, 499.6)  # whole MiB: finer is jitter


def test_both_callers_read_the_one_core():
    import autotune.online.policy as policy
    import autotune.search.choose as choose
    import autotune.search.confirm as confirm

    assert choose.cost is cost_module.cost and policy.cost is cost_module.cost
    assert policy.drift is drift and drift.tolerance is rate_module.tolerance
    assert policy.brain is choose.brain is verdict_module
    assert confirm.band is verdict_module.band
    online = ClimbSettings(epoch_steps=None, usable_cpus=2, cuda=False).worker_range(LoaderConfig())
    offline = SearchRange.of(
        SearchSpace(max_workers=8, cuda=False, channels_last_ok=False), 2, None
    )
    assert type(online) is type(offline.range) is WorkerRange
    assert (online.top, online.limit) == (offline.range.top, offline.range.limit) == (8, 64)


def _evidence(**given) -> Evidence:
    base = dict(
        label="w8 pf2",
        workers=8,
        rate=1000.0,
        rate_by_workers={4: 600.0, 8: 1000.0},
        wait_share=0.3,
        computes=None,
    )
    return Evidence(**{**base, **given})


def test_the_range_grows_by_half_while_the_evidence_says_more_workers_pay():
    r = WorkerRange.of(2, None)
    assert r.grow(_evidence()) and (r.top, r.grown_from, r.stop) == (12, 8, None)
    assert (
        not r.grow(_evidence(workers=8))
        and r.stop == "the best has 8 workers, below the range's top of 12"
    )
    assert r.why_stopped(8, "w8 pf2", starved=True) == r.stop


@pytest.mark.parametrize(
    "given, why",
    [
        (dict(rate_by_workers={8: 1000.0, 12: 900.0}), "the rate fell past the best's 8 workers"),
        (dict(wait_share=0.01), "waits for data 1% of the step"),
        (dict(wait_share=None), "waits for data n/a of the step"),
        (dict(computes="busy CPUs", rate_by_workers={4: 980.0, 8: 1000.0}), "busy CPUs"),
    ],
)
def test_the_range_stops_on_the_same_rules_for_both_callers(given, why):
    assert why in growth_stop(_evidence(**given), 8)


def test_a_measured_rise_at_the_top_outweighs_a_reading_that_the_workers_compute():
    rising = _evidence(computes="busy CPUs", rate_by_workers={4: 800.0, 6: 900.0, 8: 1000.0})
    assert still_rising(rising) and growth_stop(rising, 8) is None
    assert not still_rising(_evidence(rate_by_workers={8: 1000.0}))  # nothing below to compare


def test_a_figure_s_error_is_the_wider_of_the_known_noise_and_its_own_spread():
    # Four bursts at 10% noise: two standard errors are 2 x 10% / sqrt(4).
    assert error_pct([100.0] * 4, 0.10) == pytest.approx(10.0)
    # Two bursts 20 apart spread wider than the 1% known: their own spread (14.1%) decides.
    assert measured_cv([90.0, 110.0], 0.01) == pytest.approx(0.1414, abs=1e-4)
    assert error_pct([90.0, 110.0], 0.01) == pytest.approx(20.0, abs=0.01)
    # One burst and no noise measured elsewhere: nothing to say, not zero.
    assert error_pct([100.0], None) is None and measured_cv([100.0], None) is None


# -- interleaved pieces ----------------------------------------------------------------------
def _alternating(a: list[float], b: list[float], first_at: int = 0):
    """A and B measured in turn (A, B, A, B ...) on one clock."""
    at_a = tuple(float(first_at + 2 * i) for i in range(len(a)))
    at_b = tuple(float(first_at + 2 * i + 1) for i in range(len(b)))
    pieces = verdict_module.Pieces
    return (
        pieces(tuple(a), (1.0,) * len(a), at=at_a),
        pieces(tuple(b), (1.0,) * len(b), at=at_b),
    )


def test_pieces_pair_only_when_taken_back_to_back():
    a, b = _alternating([100.0, 90.0, 110.0], [97.0, 87.0, 107.0])
    d = verdict_module.pairs(a, b)
    assert d == pytest.approx((math.log(100 / 97), math.log(90 / 87), math.log(110 / 107)))
    # A, A, B, B: one pair (the middle two), not two.
    p = verdict_module.Pieces
    a2, b2 = p((100.0, 90.0), (1.0, 1.0), at=(0.0, 1.0)), p((97.0, 88.0), (1.0, 1.0), at=(2.0, 3.0))
    assert len(verdict_module.pairs(a2, b2)) == 1
    # Unknown times (pieces from another run): no pairs.
    assert verdict_module.pairs(p((100.0,), (1.0,)), p((97.0,), (1.0,))) == ()
    # The pieces that selected a configuration do not pair: only its fresh ones.
    sel = p((140.0, 100.0, 90.0), (1.0,) * 3, selected_at=1, at=(-1.0, 0.0, 2.0))
    other = p((97.0, 87.0), (1.0,) * 2, at=(1.0, 3.0))
    assert len(verdict_module.pairs(sel, other)) == 2


def test_a_piece_below_0_3_of_its_configuration_s_median_is_a_stall_counted_nowhere():
    p = verdict_module.Pieces
    stalled = p((350.0, 82.0, 357.0, 356.0), (0.1, 0.13, 0.1, 0.1), at=(0.0, 2.0, 4.0, 6.0))
    assert stalled.stalled == (False, True, False, False) and stalled.stalls == 1
    assert stalled.fresh == (350.0, 357.0, 356.0) and stalled.steady == stalled.fresh
    assert stalled.fresh_spans == (0.1, 0.1, 0.1) and stalled.fresh_at == (0.0, 4.0, 6.0)
    assert stalled.mean == pytest.approx(pooled_rate([350.0, 357.0, 356.0], [0.1] * 3))
    # It widens no noise: the pooled spread is that of the other three.
    assert verdict_module.noise_cv([stalled]) == pytest.approx(
        rate_module.pooled_cv([[350.0, 357.0, 356.0]])
    )
    # Nor pairs: the stalled piece (at 2.0) leaves its neighbour (at 1.0) to pair with the next.
    other = p((340.0, 345.0, 341.0), (0.1,) * 3, at=(1.0, 3.0, 5.0))
    assert len(verdict_module.pairs(stalled, other)) == 3
    # After a selection, a stall among the fresh pieces is left out too; one before it stays out
    # as every selecting piece does.
    selected = p((360.0, 90.0, 350.0, 352.0), (0.1,) * 4, selected_at=1)
    assert selected.fresh == (350.0, 352.0)
    # Of two pieces, or where the low one is above 0.3 of the median, every piece counts: a
    # configuration's own slow windows (heavy-tail's convoys) read down to 0.45 of it.
    assert p((350.0, 82.0), (0.1, 0.1)).stalled == (False, False)
    assert p((350.0, 160.0, 357.0), (0.1,) * 3).stalls == 0


def test_a_drifting_machine_splits_alternated_configurations_that_means_cannot():
    # The machine drifts by ±15% between rounds; A is 4% faster than B in every round.
    drift = [1.0, 0.85, 1.15, 0.9, 1.1]
    a, b = _alternating([100.0 * f for f in drift], [96.0 * f for f in drift])
    cv = verdict_module.noise_cv([a, b])
    assert cv is not None and cv > 0.1
    # On the two means, the drift is noise: open, then tied at the end (4% is within it)...
    independent = verdict_module.verdict(a, b, cv, exhausted=False)
    assert independent is verdict_module.Verdict.OPEN
    # ... pair by pair, the drift cancels and A is faster beyond the band.
    paired_cv = verdict_module.paired_noise(a, [a, b])
    assert paired_cv is not None and paired_cv < 0.01
    assert verdict_module.verdict(a, b, cv, exhausted=False, paired_cv=paired_cv) is (
        verdict_module.Verdict.WORSE
    )
    c = verdict_module.compare(a, b, cv, paired_cv)
    assert c.paired == 5 and c.slower_share == pytest.approx(0.96) and not c.cand_faster
    assert c.band == pytest.approx(verdict_module.TOLERANCE_FLOOR)


def test_pairs_that_scatter_as_much_as_the_difference_leave_it_to_the_cost():
    # Round by round the order flips: the pairs cannot separate them, and measured all they may
    # be, 1% apart is a tie (the cheaper is chosen), not a win.
    a, b = _alternating([100.0, 95.0, 104.0, 99.0], [97.0, 99.0, 102.0, 97.0])
    paired_cv = verdict_module.paired_noise(a, [a, b])
    assert paired_cv is not None and paired_cv > 0.03
    V = verdict_module.Verdict
    assert verdict_module.verdict(a, b, 0.03, exhausted=False, paired_cv=paired_cv) is V.OPEN
    assert verdict_module.verdict(a, b, 0.03, exhausted=True, paired_cv=paired_cv) is V.TIED


def test_the_drift_band_is_the_wider_of_the_windows_noise_and_the_floor_of_whole_runs():
    assert drift.band(None, 2, 2) == drift.DRIFT_FLOOR
    assert drift.band(0.02, 2, 2) == drift.DRIFT_FLOOR  # precise windows: runs still differ
    assert drift.band(0.3, 2, 2) == pytest.approx(Z * 0.3)  # noisy windows widen it
    assert not drift.drifted(0.8, 1.0, drift.DRIFT_FLOOR)
    assert drift.drifted(0.7, 1.0, drift.DRIFT_FLOOR) and drift.drifted(1.3, 1.0, drift.DRIFT_FLOOR)
    assert drift.slowed_early(0.4, 1.0) and not drift.slowed_early(0.6, 1.0)
    assert not drift.slowed_early(3.0, 1.0)  # a speed-up is left to the full check


def test_a_slower_start_up_predicts_a_slower_first_epoch_over_the_same_steady_steps():
    rates = drift.first_epoch_rates(100.0, 16, 0.66, 0.18)
    assert rates is not None
    now, before = rates
    assert before == pytest.approx(16 / (0.16 + 0.18)) and now == pytest.approx(16 / (0.16 + 0.66))
    assert drift.slowed_early(now, before, drift.DRIFT_FLOOR)
    # the same shift over a 600-step epoch is a few percent: the full check's to judge
    long = drift.first_epoch_rates(100.0, 600, 0.66, 0.18)
    assert long is not None and not drift.slowed_early(*long, drift.DRIFT_FLOOR)
    assert drift.first_epoch_rates(100.0, None, 0.66, 0.18) is None  # no epoch: no prediction
    assert drift.first_epoch_rates(100.0, 16, 0.66, None) is None  # never measured


def test_the_pick_among_ties_reads_high_by_the_expected_maximum_of_their_noise():
    """selection_bias against the winner's curse simulated: k configurations of one true rate,
    each measured in n windows of relative noise cv, the fastest mean picked; its mean excess
    over the truth, averaged over many seeded picks."""
    import random
    import statistics

    from autotune.decision.drift import selection_bias
    from autotune.decision.verdict import Pieces

    def at(mean: float, n: int) -> Pieces:
        return Pieces((mean,) * n, (1.0,) * n)

    rng = random.Random(7)
    cv, n, k = 0.08, 2, 3
    excess = []
    for _ in range(20_000):
        means = [statistics.fmean(rng.gauss(1.0, cv) for _ in range(n)) for _ in range(k)]
        excess.append(max(means) - 1.0)
    simulated = statistics.fmean(excess)
    rivals = [at(1.0, n)] * (k - 1)
    assert selection_bias(cv, at(1.0, n), rivals) == pytest.approx(simulated, rel=0.08)
    # Nothing tied, nothing picked: no bias; a rival far slower is no tie; unknown noise: none.
    assert selection_bias(cv, at(1.0, n), []) == 0.0
    assert selection_bias(cv, at(1.0, n), [at(0.3, n)]) == 0.0
    assert selection_bias(None, at(1.0, n), rivals) == 0.0
    # More ties, more bias; more windows of the best, less.
    assert selection_bias(cv, at(1.0, n), rivals * 3) > selection_bias(cv, at(1.0, n), rivals)
    assert selection_bias(cv, at(1.0, 6), rivals) < selection_bias(cv, at(1.0, n), rivals)


def test_the_first_prefetch_depth_is_the_shallowest_only_where_epochs_are_short():
    from autotune.decision.prefetch import first_depth

    assert first_depth(True, (1, 2, 4, 8), None) == 1
    assert first_depth(True, (2, 4), 4) == 2
    assert first_depth(False, (1, 2, 4, 8), None) is None
    assert first_depth(False, (1, 2, 4, 8), 4) == 4
