"""Which configurations are re-measured, in which order, and when the search stops."""

from __future__ import annotations

from search_fakes import cfg, trials

from autotune.search.choose import group
from autotune.search.confirm import (
    MAX_CANDIDATES,
    MEASUREMENTS,
    fewer_workers,
    out_of_band,
    rounds,
    still_tied,
    to_confirm,
)
from autotune.search.stopping import CEILING_GAP, StopRules
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.space import SearchSpace

SPACE = SearchSpace(max_workers=8, cuda=False, channels_last_ok=False)


def test_two_fastest_then_cheapest_near_them_then_one_worker_fewer():
    ts = trials(
        (cfg(0), 100), (cfg(6), 1000), (cfg(8), 980), (cfg(4), 950), (cfg(5), 960), (cfg(2), 500)
    )
    chosen = to_confirm(group(ts), SPACE)
    # The runner-up is re-measured too: its one burst may have been the unlucky one.
    assert chosen[:2] == [cfg(6), cfg(8)]
    assert chosen[2:MAX_CANDIDATES] == [cfg(4)]  # the cheapest within the band, not cfg(5)
    assert chosen[MAX_CANDIDATES:] == [cfg(3)]  # never measured, one below the cheapest
    assert cfg(2) not in chosen and cfg(0) not in chosen  # far behind


def test_no_fewer_workers_candidate_when_already_measured_or_at_one():
    assert fewer_workers(cfg(1)) is None
    ts = trials((cfg(4), 1000), (cfg(3), 990), (cfg(2), 700))
    assert to_confirm(group(ts), SPACE) == [cfg(4), cfg(3)]  # cfg(2) was measured: no neighbour
    ts = trials((cfg(4), 1000), (cfg(3), 700))
    assert to_confirm(group(ts), SPACE) == [cfg(4), cfg(3), cfg(2)]  # the runner-up, however far
    assert to_confirm([], SPACE) == []


def test_rounds_alternate_until_each_has_enough_measurements():
    order = rounds([cfg(6), cfg(4), cfg(3)], {cfg(6): 1, cfg(4): 1})
    assert order[:3] == [cfg(6), cfg(4), cfg(3)]  # one round through all before any repeats
    counts = {c: order.count(c) + {cfg(6): 1, cfg(4): 1}.get(c, 0) for c in set(order)}
    assert set(counts.values()) == {MEASUREMENTS}


def test_stop_at_the_device_ceiling_once_the_seeds_are_measured():
    rules = StopRules(device_ceiling=1000, seeds=3)
    rules.update(trials((cfg(0), 1000 * (1 - CEILING_GAP) + 1))[0])
    assert rules.reason() is None  # at the ceiling, but the other seeds may be as fast and cheap
    rules.update(trials((cfg(1), 900))[0])
    assert rules.reason() is None
    rules.update(trials((cfg(2), 800))[0])
    assert rules.reason() == "reached the device ceiling"


def test_stop_after_patience_without_gain_counting_only_after_the_seeds():
    rules = StopRules(device_ceiling=10_000, seeds=3, patience=2)
    for t in trials((cfg(0), 100), (cfg(1), 100), (cfg(2), 100)):  # seeds: never count
        rules.update(t)
    assert rules.reason() is None
    rules.update(TrialRecord(3, cfg(3), TrialStatus.FAILED, error="boom"))
    assert rules.reason() is None
    rules.update(trials((cfg(4), 101.5))[0])  # a gain within what counts as equal
    assert rules.reason() == "no gain in 2 trials"
    rules.update(trials((cfg(5), 200))[0])
    assert rules.reason() is None


def test_a_candidate_measured_far_behind_is_not_measured_again():
    measured = group(trials((cfg(3), 500), (cfg(3), 490), (cfg(2), 480), (cfg(1), 240)))
    assert out_of_band(cfg(1), measured)  # one worker fewer, tried once: half the rate
    assert not out_of_band(cfg(2), measured)  # within noise's reach of the fastest
    assert not out_of_band(cfg(5), measured)  # never measured: it must be, once


def test_another_round_only_while_the_noise_cannot_tell_the_tied_candidates_apart():
    quiet = group(trials((cfg(3), 500), (cfg(3), 505), (cfg(2), 495), (cfg(2), 498)))
    assert still_tied(quiet) == []  # a band of about 2 x 0.7%: the choice is sound
    noisy = group(trials((cfg(3), 500), (cfg(3), 540), (cfg(2), 470), (cfg(2), 510)))
    assert set(still_tied(noisy)) == {cfg(3), cfg(2)}  # ~6% noise: tied on a ~11% band
    order = rounds([cfg(3), cfg(2)], {cfg(3): 2, cfg(2): 2}, 3)
    assert order == [cfg(3), cfg(2)]
    apart = group(trials((cfg(3), 500), (cfg(3), 540), (cfg(2), 300), (cfg(2), 320)))
    assert still_tied(apart) == []  # far behind even on that band: nothing to resolve


def test_without_early_stop_only_the_trial_cap_ends_a_search_at_the_ceiling():
    from types import SimpleNamespace

    from autotune.search.budget import Budget
    from autotune.search.phases import _stop_reason

    searched = trials((cfg(0), 999), (cfg(1), 998), (cfg(2), 997))
    runner = SimpleNamespace(
        stop=SimpleNamespace(requested=False),
        trials=searched,
        budget=Budget(1e9, clock=lambda: 0.0),
    )
    rules = StopRules(device_ceiling=1000, seeds=1)
    for t in searched:
        rules.update(t)
    assert _stop_reason(runner, rules, max_trials=5) == "reached the device ceiling"
    assert _stop_reason(runner, None, max_trials=5) is None
    assert _stop_reason(runner, None, max_trials=3) == "3 trials (--trials)"
