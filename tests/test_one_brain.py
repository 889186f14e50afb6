"""One brain (decision/verdict.py, decision/worker_range.py): the same measurements fed through the
offline search's path (TrialRecords of bursts, grouped into Candidates and chosen among) and the
online climb's (Measurements of windows, judged by the climb) reach the same verdicts, the same
persistence and the same worker range."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
import torch
from search_fakes import burst

from autotune.decision.verdict import Verdict
from autotune.online.climb_types import ClimbSettings
from autotune.online.measurement import Measurement
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.search.choose import Candidate, choose, group, recorded
from autotune.search.confirm import still_tied
from autotune.search.phases import persistent_twin
from autotune.search.search_range import SearchRange
from autotune.search.setup import build_space
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig

CHEAP = LoaderConfig(num_workers=2, prefetch_factor=2)  # the best so far online
DEAR = LoaderConfig(num_workers=4, prefetch_factor=2)  # the candidate


@dataclass(frozen=True)
class Seq:
    """One configuration's pieces as (rate, seconds): `before` those that selected it for
    re-measurement (search bursts offline, the windows that made it the best online), `after`
    those measured since (confirm bursts, fresh windows). No `after`: never selected."""

    before: tuple[tuple[float, float], ...]
    after: tuple[tuple[float, float], ...] = ()


def offline(cheap: Seq, dear: Seq) -> list[Candidate]:
    trials = []
    for config, seq in ((CHEAP, cheap), (DEAR, dear)):
        phases = [Phase.SEARCH] * len(seq.before) + [Phase.CONFIRM] * len(seq.after)
        for phase, (rate, span) in zip(phases, seq.before + seq.after, strict=True):
            result = replace(burst(config, rate), window_s=span)
            trials.append(TrialRecord(len(trials), config, TrialStatus.OK, result, phase=phase))
    return group(trials)


def offline_verdict(cheap: Seq, dear: Seq) -> Verdict:
    """The dear candidate against the cheap one, as the search's choice reads: outside the
    fastest's band, worse (or the cheap one is); within it, open while the confirm phase would
    measure them again (still_tied), else tied."""
    candidates = offline(cheap, dear)
    choice = choose(candidates)
    assert choice is not None
    equivalent = {c.config for c in choice.equivalent}
    if DEAR not in equivalent:
        return Verdict.WORSE
    if CHEAP not in equivalent:
        return Verdict.BETTER
    return Verdict.OPEN if still_tied(candidates) else Verdict.TIED


def offline_exhausted(cheap: Seq, dear: Seq) -> Verdict:
    """The budget ended: the dear one is better where it is chosen over the cheaper one, tied
    where the cheaper one is chosen while the dear one is faster."""
    choice = choose(offline(cheap, dear))
    assert choice is not None
    if choice.chosen.config == DEAR:
        return Verdict.BETTER
    return Verdict.TIED if choice.fastest.config == DEAR else Verdict.WORSE


def measurement(config: LoaderConfig, seq: Seq) -> Measurement:
    pieces = seq.before + seq.after
    return Measurement(
        config,
        rates=[r for r, _ in pieces],
        spans=[s for _, s in pieces],
        fresh_from=len(seq.before) if seq.after else 0,
    )


def online_verdict(cheap: Seq, dear: Seq, max_windows: int = 6) -> Verdict:
    settings = ClimbSettings(
        epoch_steps=None, usable_cpus=2, cuda=False, min_windows=1, max_windows=max_windows
    )
    climb = HillClimb(CHEAP, TUNED, settings)
    best, cand = measurement(CHEAP, cheap), measurement(DEAR, dear)
    climb.measured = {CHEAP: best, DEAR: cand}
    climb.best = best
    return climb.verdict(best, cand)


def quiet(*rates: float) -> Seq:
    return Seq(tuple((r, 1.0) for r in rates))


SEQUENCES = {
    "a clear winner": (quiet(100, 101), quiet(150, 151), Verdict.BETTER),
    "a clear loser": (quiet(150, 151), quiet(100, 101), Verdict.WORSE),
    "a quiet tie": (quiet(100.0, 100.4), quiet(100.2, 100.3), Verdict.TIED),
    "a noisy tie": (quiet(100, 120, 90), quiet(105, 95, 115), Verdict.OPEN),
    # A lucky burst (window) selected the dear one; its fresh pieces alone tie with the cheap.
    "the winner's curse": (
        quiet(100.2, 100.6),
        Seq(((140.0, 1.0),), ((100.0, 1.0), (100.4, 1.0))),
        Verdict.TIED,
    ),
    # The same, with the lucky piece counted: clearly better. The curse decides the verdict.
    "the lucky piece counted": (quiet(100.2, 100.6), quiet(140, 140.4), Verdict.BETTER),
    # One piece at a quarter of the others (a whole-process pause): a stall, counted nowhere; the
    # dear one's other pieces are 6% above the cheap one's, clearly.
    "a stall": (quiet(335, 337), quiet(351, 82, 357, 356), Verdict.BETTER),
    # Of two pieces, which one stalled cannot be told: both count, and nothing is resolved.
    "a low piece of two": (quiet(335, 337), quiet(351, 82), Verdict.OPEN),
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_the_same_measurements_reach_the_same_verdict_offline_and_online(name):
    cheap, dear, expected = SEQUENCES[name]
    # Both drivers hand the one brain the same pieces.
    by_config = {c.config: c for c in offline(cheap, dear)}
    assert by_config[DEAR].pieces.fresh == measurement(DEAR, dear).pieces.fresh
    assert by_config[CHEAP].pieces.mean == pytest.approx(measurement(CHEAP, cheap).mean)
    assert offline_verdict(cheap, dear) is expected
    assert online_verdict(cheap, dear) is expected


@pytest.mark.parametrize(
    "cheap, dear, expected",
    [
        # Noisy and measured all they may be: the means decide beyond TARGET (2%).
        (quiet(100, 120, 90), quiet(105, 95, 112), Verdict.TIED),  # 0.7% apart
        (quiet(100, 120, 90), quiet(110, 100, 122), Verdict.BETTER),  # 6.5% apart
        # Long slow pieces and a short fast one: the work over the time (92.4/s), 8% below,
        # where a mean of the rates (103.7/s) would say 3% above.
        (
            Seq(((100.0, 10.0), (101.0, 10.0))),
            Seq(((90.0, 10.0), (130.0, 1.0), (91.0, 10.0))),
            Verdict.WORSE,
        ),
    ],
)
def test_an_unresolved_tie_is_decided_alike_where_no_more_is_measured(cheap, dear, expected):
    assert offline_verdict(cheap, dear) is Verdict.OPEN
    assert online_verdict(cheap, dear) is Verdict.OPEN
    assert offline_exhausted(cheap, dear) is expected
    assert online_verdict(cheap, dear, max_windows=3) is expected


@pytest.mark.parametrize("restart_share, matters", [(0.01, False), (0.03, True)])
def test_persistent_workers_matter_on_the_same_rule_offline_and_online(restart_share, matters):
    epoch_s = 10.0
    # Offline: the best burst's measured restart against its epoch, at 100 samples/s.
    done = TrialRecord(
        0,
        CHEAP,
        TrialStatus.OK,
        replace(burst(CHEAP, 100.0), epoch_samples=1000, restart_cost_s=restart_share * epoch_s),
        phase=Phase.SEARCH,
    )
    twin = persistent_twin([done])
    # Online: the chosen pool's start-up against an epoch of its steps, at 100 batches/s.
    settings = ClimbSettings(epoch_steps=1000, usable_cpus=2, cuda=False)
    climb = HillClimb(CHEAP, TUNED, settings)
    climb.best.rates, climb.best.spans = [100.0, 100.0], [1.0, 1.0]
    climb.best.startup_s = restart_share * epoch_s
    assert (twin is not None) is matters
    assert climb.choice_so_far().persistent_workers is matters


def test_an_explicit_max_workers_above_four_per_cpu_is_honoured_offline_and_online():
    cpus, asked = 2, 16  # 4 per CPU would be 8
    space = build_space(torch.zeros(4, 3), torch.device("cpu"), asked, cpus)
    searched = SearchRange.of(space, cpus, asked)
    online = ClimbSettings(
        epoch_steps=None, usable_cpus=cpus, cuda=False, max_workers=asked
    ).worker_range(LoaderConfig())
    assert space.max_workers == searched.space.max_workers == asked
    assert (
        (searched.range.top, searched.range.limit) == (online.top, online.limit) == (asked, asked)
    )
    # Not given: both start at 4 per CPU and may grow to the hard limit.
    default = SearchRange.of(
        build_space(torch.zeros(4, 3), torch.device("cpu"), None, cpus), cpus, None
    )
    unasked = ClimbSettings(epoch_steps=None, usable_cpus=cpus, cuda=False).worker_range(
        LoaderConfig()
    )
    assert default.space.max_workers == default.range.top == unasked.top == 8
    assert default.range.limit == unasked.limit


@pytest.mark.parametrize("records", [(99.0, 100.0), ()])
def test_the_winner_s_figure_comes_from_the_pieces_measured_after_it_was_chosen(records):
    # Offline: a lucky search burst, two re-measurements, then the record bursts after the
    # choice. Online: the windows it was chosen on, then those measured again after.
    trials = [
        TrialRecord(0, DEAR, TrialStatus.OK, burst(DEAR, 140.0), phase=Phase.SEARCH),
        TrialRecord(1, DEAR, TrialStatus.OK, burst(DEAR, 100.0), phase=Phase.CONFIRM),
        TrialRecord(2, DEAR, TrialStatus.OK, burst(DEAR, 101.0), phase=Phase.CONFIRM),
    ]
    trials += [
        TrialRecord(3 + i, DEAR, TrialStatus.OK, burst(DEAR, r), phase=Phase.RECORD)
        for i, r in enumerate(records)
    ]
    (chosen,) = group(trials)
    windows = Measurement(DEAR, rates=[100.0, 101.0], spans=[1.0, 1.0])
    windows.remeasure()
    windows.rates += list(records)
    windows.spans += [1.0] * len(records)
    figure = recorded(chosen, trials)
    assert figure.shown_mean == pytest.approx(windows.shown_mean)
    assert figure.shown_mean == pytest.approx(sum(records or (100.0, 101.0)) / 2)


def test_configurations_measured_in_turn_are_judged_pair_by_pair_offline_and_online():
    # A search piece each, then five rounds of re-measurements in turn (A, B, A, B) on a machine
    # drifting ±15% between rounds, the dear one 4% faster in every round: on independent means
    # the drift is noise (open), pair by pair it cancels and the dear one is better.
    drift = (1.0, 0.85, 1.15, 0.9, 1.1)
    cheap = [110.0] + [100.0 * f for f in drift]
    dear = [111.0] + [104.0 * f for f in drift]
    trials, windows = [], {}
    for config, rates in ((CHEAP, cheap), (DEAR, dear)):
        windows[config] = Measurement(config, rates=list(rates), spans=[1.0] * 6, fresh_from=1)
    for i in range(6):  # one clock for both drivers: a trial's number, a window's order
        for config, rates in ((CHEAP, cheap), (DEAR, dear)):
            phase = Phase.SEARCH if i == 0 else Phase.CONFIRM
            windows[config].at.append(float(len(trials)))
            trials.append(
                TrialRecord(
                    len(trials), config, TrialStatus.OK, burst(config, rates[i]), phase=phase
                )
            )
    choice = choose(group(trials))
    assert choice is not None and choice.chosen.config == DEAR and choice.pairs == 0
    assert {c.config for c in choice.equivalent} == {DEAR}  # the cheap one is out
    settings = ClimbSettings(epoch_steps=None, usable_cpus=2, cuda=False, max_windows=8)
    climb = HillClimb(CHEAP, TUNED, settings)
    climb.measured, climb.best = dict(windows), windows[CHEAP]
    assert climb.verdict(windows[CHEAP], windows[DEAR]) is Verdict.BETTER
    # Without the clock (pieces from elsewhere), the same figures are no longer separated.
    for m in windows.values():
        m.at.clear()
    assert climb.verdict(windows[CHEAP], windows[DEAR]) is Verdict.OPEN


def test_a_cheaper_configuration_faster_pair_by_pair_is_chosen_over_the_fastest_mean():
    # Its long pieces fell on a slow stretch of the machine and the dear one's on a fast one: the
    # means put the dear one ahead, while in each pair taken back to back the cheap one is 3%
    # faster.
    cheap = [(110.0, 1.0), (100.0, 10.0), (200.0, 1.0), (100.0, 10.0), (200.0, 1.0)]
    dear = [(111.0, 1.0), (97.0, 1.0), (194.0, 10.0), (97.0, 1.0), (194.0, 10.0)]
    trials = []
    for i in range(5):
        for config, pieces in ((CHEAP, cheap), (DEAR, dear)):
            rate, span = pieces[i]
            result = replace(burst(config, rate), window_s=span)
            phase = Phase.SEARCH if i == 0 else Phase.CONFIRM
            trials.append(TrialRecord(len(trials), config, TrialStatus.OK, result, phase=phase))
    choice = choose(group(trials))
    assert choice is not None and choice.fastest.config == DEAR
    assert choice.chosen.config == CHEAP
