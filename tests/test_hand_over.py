"""A ready batch's hand-over is the loop's own work, not a wait for the loader (burst/window.py's
PullWaits): the meter counts it apart, a pool whose loop waited only for hand-overs predicts
nothing of its workers (online/predict.py), and a tie goes to the cheaper configuration only where
its loop did not wait for batches not yet made, offline and online alike (decision/verdict.py's
takes_tie)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from search_fakes import burst, cfg

from autotune.burst.window import PullWaits
from autotune.decision.verdict import Verdict, takes_tie
from autotune.online.climb_types import ClimbSettings
from autotune.online.measurement import Measurement
from autotune.online.meter import Meter, Step
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.online.predict import needed_workers
from autotune.search.choose import choose, group
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig


def test_a_pull_that_found_no_batch_waited_all_its_time_for_the_loader():
    pulls = PullWaits()
    assert pulls.unready(0.030, 0) == 0.030  # unknown before: all of it
    assert pulls.unready(0.020, 2) == 0.020  # none was ready when it began


def test_a_pull_that_found_batches_waited_only_past_the_least_hand_over():
    pulls = PullWaits(backlog=3)
    assert pulls.unready(0.002, 3) == 0.0  # the least hand-over so far: all of it
    assert pulls.unready(0.0015, 2) == 0.0  # a shorter one is the new least
    # A convoy's head: later batches were ready, the next in order was not.
    assert pulls.unready(0.0515, 5) == pytest.approx(0.050)
    pulls.new_epoch()
    assert pulls.unready(0.010, 4) == 0.010  # iter() again: nothing known to be ready
    assert pulls.handover_s == 0.0015  # the same pool: its hand-over is kept
    pulls.new_pool()
    assert (pulls.backlog, pulls.handover_s) == (None, None)


class Ticks:
    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0)


def test_the_meter_counts_a_ready_batchs_hand_over_apart_from_the_wait():
    # Each call: enter, then hand out. Waits of 10, 1.5, 2 and 1.5 ms.
    ticks = Ticks(0.0, 0.010, 0.020, 0.0215, 0.030, 0.032, 0.040, 0.0415, 0.050, 0.050, 0.0515)
    meter = Meter(ticks, lambda: 0.0)
    steps = []
    for backlog in (0, 4, 4, 3):
        meter.enter()
        steps.append(meter.handed_out(backlog))
    assert steps[0].unready == pytest.approx(0.010)  # the first pull knew nothing ready
    assert steps[1].unready == pytest.approx(0.0015)  # the backlog before it read 0
    assert steps[2].unready == 0.0  # batches were ready: its 2 ms are the least hand-over
    assert steps[3].unready == 0.0
    meter.enter()
    meter.switching()  # a new pool: nothing is known to be ready in it
    assert meter.handed_out(4).unready == pytest.approx(0.0015)


def _pool(config: LoaderConfig, steps: int, step_s: float, wait_s: float, unready_s: float):
    """A pool's measurement over `steps` steady steps, its workers' CPU read at 0.5 cores."""
    m = Measurement(config)
    for i in range(steps):
        m.add(Step(i, step_s, wait_s, i, None, wait_cpu_s=1e-4, unready_s=unready_s), least=8)
    m.add_workers_cpu((0.0, 0.0), (0.5 * steps * step_s, steps * step_s))
    return m


def test_a_pool_that_waited_only_for_hand_overs_predicts_nothing_of_its_workers():
    """A 8 ms step after 1.5 ms hand-overs (16% of the step, above WAITS_SHARE): the loop waits,
    but every batch was ready, so the pool ran at the step's rate. Read as its workers' speed,
    8 / 105 batches/s per worker asked for 11 workers where 4 keep up (results/bench/climb-sim,
    tiny-epochs from w8 pf2)."""
    config = LoaderConfig(num_workers=8, prefetch_factor=2)
    fed = _pool(config, 32, 0.0095, 0.0015, 0.0)
    assert fed.starved and not fed.short
    assert needed_workers(fed, fed, 2, 64) is None
    short = _pool(config, 32, 0.0095, 0.0015, 0.0015)  # the same waits, none on a ready batch
    assert short.short and needed_workers(short, short, 2, 64) is not None


def test_a_tie_goes_to_the_cheaper_unless_it_waits_for_batches_a_real_share_more():
    assert takes_tie(0.0, 0.0) and takes_tie(0.10, 0.10) and takes_tie(0.0, 0.10)
    assert takes_tie(None, 0.10) and takes_tie(None, None)  # unknown: counted as none
    assert not takes_tie(0.10, 0.0) and not takes_tie(0.10, None)
    assert not takes_tie(0.30, 0.10)  # both wait, the cheaper by a real share more
    # Alike on either side of the threshold (deep-storage offline, 2026-12-08): a tie as well.
    assert takes_tie(0.054, 0.048) and takes_tie(0.09, 0.049)


CHEAP, DEAR = cfg(6), cfg(8)


def _offline(cheap_unready: float, dear_unready: float) -> LoaderConfig:
    trials = []
    for config, rate, short in (
        (CHEAP, 78.0, cheap_unready),
        (CHEAP, 80.0, cheap_unready),
        (DEAR, 80.0, dear_unready),
        (DEAR, 81.0, dear_unready),
    ):
        result = replace(burst(config, rate), wait_s=0.13, unready_s=short)
        trials.append(TrialRecord(len(trials), config, TrialStatus.OK, result))
    choice = choose(group(trials))
    assert choice is not None and {c.config for c in choice.equivalent} == {CHEAP, DEAR}
    return choice.chosen.config


def _online(cheap_unready: float, dear_unready: float) -> LoaderConfig:
    settings = ClimbSettings(
        epoch_steps=None, usable_cpus=2, cuda=False, min_windows=1, max_windows=2
    )
    climb = HillClimb(DEAR, TUNED, settings)

    def measured(config: LoaderConfig, rates: list[float], short: float) -> Measurement:
        return Measurement(
            config,
            rates=rates,
            spans=[1.0] * len(rates),
            steady_steps=100,
            steady_s=1.0,
            steady_wait_s=0.13,
            steady_unready_s=short,
        )

    best, cand = (
        measured(DEAR, [80.0, 81.0], dear_unready),
        measured(CHEAP, [78.0, 80.0], cheap_unready),
    )
    climb.measured = {DEAR: best, CHEAP: cand}
    climb.best = best
    verdict = climb.verdict(best, cand)
    assert verdict is Verdict.TIED
    climb._adopt(cand, verdict)
    return climb.best.config


@pytest.mark.parametrize(
    "cheap_unready, dear_unready, chosen",
    [
        (0.0, 0.0, CHEAP),  # both fed: the cheaper
        (0.10, 0.10, CHEAP),  # both short of batches: the cheaper
        (0.10, 0.0, DEAR),  # only the cheaper waits for batches: its wait is time it loses
    ],
)
def test_both_drivers_break_a_tie_the_same_way(cheap_unready, dear_unready, chosen):
    assert _offline(cheap_unready, dear_unready) == chosen
    assert _online(cheap_unready, dear_unready) == chosen
