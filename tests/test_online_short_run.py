"""A training whose length is known (OnlineOptions.total_steps or epochs): the climb warms up and
measures in fewer steps, and stops before a candidate the steps left cannot repay. Driven by the
policy tests' model of the loop (no loader, no clock)."""

import pytest
import torch

import autotune
from autotune.errors import OptionsError
from autotune.online.climb_types import StopReason
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.online.remaining import Remaining
from autotune.space.config import LoaderConfig
from tests.test_online_policy import Loop, _fed_from, _measured, _settings


def _short(total, **over):
    return HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=16, total_steps=total, **over))


def test_remaining_weighs_the_wait_it_could_save_against_two_start_ups():
    r = Remaining(total_steps=160, steps_done=40)
    assert r.left == 120
    # 50% waiting on a 40 ms step over the 100 steps left after 20 of measuring: 2 s to gain
    assert r.repays(20, 0.040, 0.5, startup_s=0.5)
    assert not r.repays(20, 0.040, 0.5, startup_s=1.5)  # 3 s of start-ups cannot be repaid
    assert not r.repays(120, 0.040, 0.5, startup_s=None)  # judged only when the run is over
    assert Remaining(100, 130).left == 0


def test_a_best_that_hardly_waits_is_credited_the_least_resolved_difference():
    # A fed best's candidates (fewer workers, pin_memory) may still pay on a long run, not a short
    # one.
    assert Remaining(100_000, 100).repays(30, 0.020, 0.0, startup_s=0.3)
    assert not Remaining(200, 100).repays(30, 0.020, 0.0, startup_s=0.3)


def test_a_known_short_run_measures_its_start_in_a_few_steps():
    unknown = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=16))
    Loop(fetch_s=0.160, step_s=0.040).run(unknown)
    short = _short(160)
    Loop(fetch_s=0.160, step_s=0.040).run(short)
    start = LoaderConfig()
    # 5 warm-up steps and a 3-step window (num_workers=0: no convoy), against 1 step each (1% of
    # 160; a 200 ms step is longer than window_s)
    assert unknown.measured[start].steps == 8
    assert short.measured[start].steps == 2
    assert _measured(short)[1].num_workers == _measured(unknown)[1].num_workers


def test_a_known_run_stops_before_a_candidate_it_cannot_repay():
    unknown = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=16))
    assert unknown.settings.whole_epochs  # 16-step epochs against a 600-step horizon
    _fed_from(3, Loop(startup_s=0.3)).run(unknown, epoch=16)
    assert [c.num_workers for c in _measured(unknown)] == [0, 5, 4, 3, 2]
    short = _short(160)
    assert not short.settings.whole_epochs  # 160 steps: no room for whole-epoch windows
    steps = _fed_from(3, Loop(startup_s=0.3)).run(short)
    # Fed at 5 workers, only fewer (cheaper) workers are left to try: 2% of a 20 ms step over the
    # steps left does not repay two 0.3 s start-ups.
    assert [c.num_workers for c in _measured(short)] == [0, 5]
    assert short.stop_reason is StopReason.RUN_END and steps < 160
    assert short.current.num_workers == 5


def test_a_candidate_the_run_cannot_repay_is_not_checked_for_memory_either():
    """The memory check reads every process's PSS (milliseconds a worker): it comes after the
    steps left have said a candidate is worth starting, not before."""
    checked: list[LoaderConfig] = []

    def room(config: LoaderConfig) -> None:
        checked.append(config)
        return None

    short = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=16, total_steps=160), room=room)
    _fed_from(3, Loop(startup_s=0.3)).run(short)
    assert short.stop_reason is StopReason.RUN_END
    assert [c.num_workers for c in checked] == [5]  # the jump; not the 4 it stopped before


def test_the_horizon_is_at_most_the_run():
    assert _settings(epoch_steps=16).horizon_steps == 600
    assert _settings(epoch_steps=16, total_steps=160).horizon_steps == 160
    assert _settings(epoch_steps=10_000, total_steps=100_000).horizon_steps == 10_000


def test_an_unknown_length_keeps_the_defaults():
    s = _settings()
    assert (s.warmup, s.least_window) == (s.warmup_steps, s.window_steps)
    long = _settings(total_steps=100_000)
    assert (long.warmup, long.least_window) == (long.warmup_steps, long.window_steps)


def _dataset(n):
    return torch.utils.data.TensorDataset(torch.arange(n))


def test_epochs_make_the_total_from_the_loaders_length():
    loader = autotune.DataLoader(
        _dataset(64), batch_size=4, online={"epochs": 10, "results_dir": None}
    )
    it = iter(loader)
    next(it)
    assert loader._session.policy.settings.total_steps == 160


def test_the_length_is_given_once():
    with pytest.raises(OptionsError) as err:
        autotune.DataLoader(_dataset(8), online={"epochs": 2, "total_steps": 10})
    assert "total_steps or epochs, not both" in str(err.value) and "\n" not in str(err.value)


def test_at_the_runs_end_a_tied_candidate_running_is_kept():
    """Starved at 5 workers whatever the workers and the prefetch (waiting 40% of the step: short
    of workers, so more are tried first): 10 workers tie with 5 and are dearer, so a long run
    keeps 5; a 200-step run that cannot repay another candidate stays on the 10 it runs, as
    switching back would start a pool again for nothing."""

    def loop():
        model = Loop(startup_s=0.4)
        model.timing = lambda c: (0.103, 0.083) if c.num_workers == 0 else (0.030, 0.012)
        return model

    short = HillClimb(LoaderConfig(), TUNED, _settings(total_steps=200))
    loop().run(short)
    assert [c.label() for c in _measured(short)] == ["w0", "w5 pf2 persist", "w10 pf2 persist"]
    assert short.stop_reason is StopReason.RUN_END
    assert (short.current.num_workers, short.current.prefetch_factor) == (10, 2)
    long = HillClimb(LoaderConfig(), TUNED, _settings())
    loop().run(long)
    assert (long.current.num_workers, long.current.prefetch_factor) == (5, 2)
