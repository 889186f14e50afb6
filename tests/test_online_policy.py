"""The hill-climb, fed steps from a model of each configuration's speed (no loader, no clock):
it finds the cheapest configuration within noise of the fastest, stops when the measured noise
settles the choice, measures longer on a noisy machine, and respects its bound and fixed knobs."""

import random

from autotune.online.meter import Step
from autotune.online.policy import TUNED, ClimbSettings, HillClimb, StopReason
from autotune.space.config import LoaderConfig


def _settings(**over):
    base = dict(budget_steps=10_000, epoch_steps=10_000, usable_cpus=2, cuda=False)
    return ClimbSettings(**{**base, **over})


def _speed(config: LoaderConfig) -> float:
    """Step seconds: more workers help up to 4, deeper prefetch not at all."""
    return {0: 0.010, 1: 0.006, 2: 0.004, 3: 0.003}.get(config.num_workers, 0.0025)


def _run(climb: HillClimb, noise=0.0, seed=0, limit=20_000, startup=0.05) -> int:
    rng = random.Random(seed)
    segment = 0
    for n in range(limit):
        if not climb.exploring:
            return n
        step_s = _speed(climb.current) * (1 + rng.gauss(0, noise))
        step = Step(n, step_s, step_s / 2, segment, startup if segment == 0 else None)
        segment = 0 if climb.observe(step) is not None else segment + 1
    return limit


def test_climbs_to_the_knee_and_stops_resolved():
    climb = HillClimb(LoaderConfig(), TUNED, _settings())
    _run(climb)
    assert climb.stop_reason is StopReason.RESOLVED
    # w4 and beyond are equally fast: the cheapest of them, at the smallest prefetch that ties
    assert climb.current.num_workers == 4 and climb.current.prefetch_factor == 1
    assert climb.best.n >= 2


def test_noise_means_more_windows_before_a_verdict():
    quiet = HillClimb(LoaderConfig(), TUNED, _settings())
    noisy = HillClimb(LoaderConfig(), TUNED, _settings())
    quiet_steps = _run(quiet)
    noisy_steps = _run(noisy, noise=0.15)
    assert noisy.stop_reason is StopReason.RESOLVED
    assert noisy_steps > quiet_steps
    assert max(m.n for m in noisy.measured.values()) > max(m.n for m in quiet.measured.values())
    assert noisy.current.num_workers >= 3  # never the slow end, noise or not


def test_bound_stops_exploring_on_the_best_so_far():
    climb = HillClimb(LoaderConfig(), TUNED, _settings(budget_steps=60))
    steps = _run(climb)
    assert climb.stop_reason is StopReason.BOUND and steps == 60
    assert (climb.current.num_workers, climb.current.prefetch_factor) == \
        (climb.best.config.num_workers, climb.best.config.prefetch_factor)


def test_first_epoch_end_stops_exploring():
    climb = HillClimb(LoaderConfig(), TUNED, _settings())
    _run(climb, limit=30)
    climb.epoch_ended()
    assert not climb.exploring and climb.stop_reason is StopReason.EPOCH_END


def test_fixed_workers_tunes_the_rest_only():
    start = LoaderConfig(num_workers=2)
    climb = HillClimb(start, ("prefetch_factor", "pin_memory"), _settings())
    _run(climb)
    assert {m.config.num_workers for m in climb.measured.values()} == {2}
    assert climb.current.num_workers == 2 and not climb.current.persistent_workers


def test_nothing_tunable_explores_nothing():
    climb = HillClimb(LoaderConfig(), ("persistent_workers",), _settings())
    assert not climb.exploring and climb.stop_reason is StopReason.NOTHING


def test_persistent_workers_where_start_up_costs_an_epoch_share():
    slow_start = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=1000))
    _run(slow_start, startup=0.5)  # 0.5 s start-up against a ~2.5 s epoch: keep the workers
    cheap_start = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=100_000))
    _run(cheap_start, startup=0.001)
    assert slow_start.current.persistent_workers
    assert not cheap_start.current.persistent_workers


def test_pin_memory_tried_only_with_cuda():
    cpu = HillClimb(LoaderConfig(), TUNED, _settings())
    _run(cpu)
    cuda = HillClimb(LoaderConfig(), TUNED, _settings(cuda=True))
    _run(cuda)
    assert not any(m.config.pin_memory for m in cpu.measured.values())
    assert any(m.config.pin_memory for m in cuda.measured.values())
    assert not cuda.current.pin_memory  # no faster: the cheaper, unpinned, wins the tie
