"""Noise-aware choice: among configurations within noise of the fastest, the cheapest wins."""

from __future__ import annotations

import pytest
from search_fakes import burst, cfg, trials

from autotune.decision.rate import tolerance
from autotune.decision.thresholds import TARGET, TOLERANCE_FLOOR, Z
from autotune.recipe.model import Measured
from autotune.search.choose import choose, group, noise_cv
from autotune.search.trial import Phase, TrialRecord, TrialStatus


def test_fewest_workers_wins_among_equals():
    ts = trials(
        (cfg(6), 800), (cfg(6), 792), (cfg(2), 795), (cfg(2), 790), (cfg(4), 799), (cfg(4), 801)
    )
    choice = choose(group(ts))
    assert choice.chosen.config == cfg(2)
    assert {c.config for c in choice.equivalent} == {cfg(2), cfg(4), cfg(6)}


def test_then_smallest_prefetch_then_least_ram_then_no_pinning():
    same = [
        (cfg(3, 8), 500, 700),
        (cfg(3, 8), 501, 700),
        (cfg(3, 2), 499, 900),
        (cfg(3, 2), 500, 900),
    ]
    assert choose(group(trials(*same))).chosen.config == cfg(3, 2)
    ram = [
        (cfg(3, 2, persistent_workers=True), 500, 650),
        (cfg(3, 2, persistent_workers=True), 500, 650),
        (cfg(3, 2), 500, 600),
        (cfg(3, 2), 501, 600),
    ]
    assert choose(group(trials(*ram))).chosen.config == cfg(3, 2)
    pin = [
        (cfg(3, 2, pin_memory=True), 500, 600),
        (cfg(3, 2, pin_memory=True), 500, 600),
        (cfg(3, 2), 500, 600),
        (cfg(3, 2), 500, 600),
    ]
    assert choose(group(trials(*pin))).chosen.config == cfg(3, 2)


def test_a_clearly_slower_cheap_configuration_is_not_chosen():
    ts = trials(
        (cfg(6), 800), (cfg(6), 801), (cfg(6), 799), (cfg(2), 600), (cfg(2), 601), (cfg(2), 599)
    )
    choice = choose(group(ts))
    assert choice.chosen.config == cfg(6)
    assert choice.equivalent == (choice.chosen,)


def test_noise_widens_the_tolerance_as_far_as_the_noise_goes():
    quiet = trials((cfg(4), 1000), (cfg(4), 1001), (cfg(1), 975), (cfg(1), 976))
    # 2.5% slower is a real difference when bursts agree to 0.1%...
    assert choose(group(quiet)).chosen.config == cfg(4)
    noisy = trials((cfg(4), 1000), (cfg(4), 1040), (cfg(1), 985), (cfg(1), 1025))
    # ...and within noise when they scatter by ~3%.
    assert choose(group(noisy)).chosen.config == cfg(1)
    assert tolerance(None, 1, 1) == TOLERANCE_FLOOR
    assert tolerance(0.5, 2, 2) == pytest.approx(Z * 0.5)  # no cap: 50% noise ties almost anything
    assert tolerance(0.0, 3, 3) == TOLERANCE_FLOOR


def test_one_lucky_burst_does_not_beat_remeasured_configurations():
    ts = trials((cfg(8), 950), (cfg(4), 800), (cfg(4), 805), (cfg(5), 810), (cfg(5), 800))
    choice = choose(group(ts))
    assert choice.fastest.config == cfg(5)
    assert choice.chosen.config == cfg(4)


def test_noise_is_pooled_relative_spread():
    ts = trials((cfg(4), 90), (cfg(4), 110), (cfg(2), 45), (cfg(2), 55), (cfg(1), 30))
    assert noise_cv(group(ts)) == pytest.approx(0.1414, rel=1e-3)
    assert noise_cv(group(trials((cfg(4), 90), (cfg(2), 45)))) is None


def test_a_configuration_rejected_once_is_out():
    ts = trials((cfg(2), 700), (cfg(2), 700), (cfg(8), 900), (cfg(8), 900))
    ts.append(
        TrialRecord(
            len(ts), cfg(8), TrialStatus.REJECTED, result=burst(cfg(8), 900), error="over budget"
        )
    )
    assert {c.config for c in group(ts)} == {cfg(2)}
    assert choose(group(ts)).chosen.config == cfg(2)
    assert choose([]) is None


def _confirmed(*measurements):
    """Like trials(), every measurement after a configuration's first taken as a re-measurement."""
    seen, out = set(), []
    for t in trials(*measurements):
        t.phase = Phase.CONFIRM if t.config in seen else t.phase
        seen.add(t.config)
        out.append(t)
    return out


def test_the_search_burst_that_selected_a_configuration_does_not_count_in_its_mean():
    ts = _confirmed(
        (cfg(8), 940), (cfg(8), 760), (cfg(8), 780), (cfg(2), 850), (cfg(2), 880), (cfg(2), 870)
    )
    choice = choose(group(ts))
    assert choice.fastest.config == cfg(2) and choice.fastest.mean == pytest.approx(875)
    assert cfg(8) not in {c.config for c in choice.equivalent}  # 770: behind by more than the noise


def test_a_band_wider_than_the_target_leaves_the_choice_unresolved_and_names_the_ties():
    noisy = _confirmed(
        (cfg(4), 1000), (cfg(4), 1000), (cfg(4), 1120), (cfg(2), 990), (cfg(2), 900), (cfg(2), 1060)
    )
    choice = choose(group(noisy))
    assert [c.config for c in choice.equivalent] == [cfg(2), cfg(4)]  # tied within the noise...
    assert choice.band > TARGET and not choice.resolved
    # ...but 7.5% behind on the means: unresolved, the cheaper one is not chosen on a hunch.
    assert choice.chosen.config == cfg(4)
    assert [c.config for c in choice.ties] == [cfg(2)]
    assert {c.config for c in choice.unresolved()} == {cfg(2), cfg(4)}
    quiet = _confirmed(
        (cfg(4), 1000), (cfg(4), 1000), (cfg(4), 1002), (cfg(2), 995), (cfg(2), 994), (cfg(2), 996)
    )
    settled = choose(group(quiet))
    assert settled.resolved and settled.unresolved() == ()
    assert settled.chosen.config == cfg(2) and [c.config for c in settled.ties] == [cfg(4)]


def test_one_re_measured_configuration_alone_does_not_win_by_default():
    # The budget ended after one re-measurement: w7 has two bursts, the cheaper w2 one. w7 must
    # not win merely for being the only configuration measured twice.
    ts = trials((cfg(7), 140), (cfg(2), 136), (cfg(7), 135.5))
    choice = choose(group(ts))
    assert {c.config for c in choice.equivalent} == {cfg(7), cfg(2)}
    assert choice.chosen.config == cfg(2)
    # Two or more re-measured: those alone compete, as before.
    assert choose(group(ts + trials((cfg(2), 120)))).chosen.config == cfg(7)


def test_alternated_re_measurements_that_cannot_be_split_say_so_and_the_cheaper_wins():
    # Measured in turn four times after the search, the order flipping round by round: the pairs
    # cannot separate w2 from w4 (1% apart on the means), so the budget's end leaves it to the
    # cost, and the recipe says how they were compared.
    ts = _confirmed(
        (cfg(4), 1100), (cfg(2), 1080),
        (cfg(4), 1000), (cfg(2), 970), (cfg(4), 950), (cfg(2), 990),
        (cfg(4), 1040), (cfg(2), 1020), (cfg(4), 990), (cfg(2), 970),
    )  # fmt: skip
    choice = choose(group(ts))
    assert choice is not None and choice.pairs == 4 and not choice.resolved
    assert choice.chosen.config == cfg(2) and [c.config for c in choice.ties] == [cfg(4)]
    measured = Measured(
        samples_per_s=990.0,
        baseline_samples_per_s=None,
        speedup=None,
        tied_with=["w4 pf2"],
        tie_band_pct=100 * choice.band,
        ties_resolved=choice.resolved,
        tie_pairs=choice.pairs,
    )
    note = measured.tie_note("w2 pf2")
    assert note is not None and "measured alternately in 4 rounds, pair by pair" in note
    assert "cheapest of those within 2% of the fastest" in note
