"""Where a burst's window lies in an epoch: its middle, ended before the tail, or whole epochs
timed where an epoch is too short for a window inside it. Bursts run on a fake clock."""

from __future__ import annotations

import pytest
from timing_fakes import FakeClock, scheduled_workload

from autotune.burst import pacing, runner
from autotune.burst.epoch import EpochLength, epoch_rate, whole_epoch_cost
from autotune.burst.epoch_window import EpochPlace, WholeEpochs, whole_epochs
from autotune.burst.runner import BurstSettings, run_burst
from autotune.burst.window import Mark
from autotune.space.config import LoaderConfig
from autotune.telemetry import phases


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    return FakeClock().install(monkeypatch, runner, pacing, phases)


def test_the_middle_lies_between_the_refill_and_the_tail():
    place = EpochPlace(batches=20, depth=4)
    assert not place.middle(3, room=0)  # still the refill's convoy
    assert place.middle(4, room=0) and place.middle(15, room=0)
    assert not place.middle(16, room=0)  # the last 4 batches get no new work: the tail
    assert place.middle(7, room=8) and not place.middle(8, room=8)  # 8 batches left before it
    assert place.last_before_tail(15) and not place.last_before_tail(14)
    assert place.ends_epoch(19) and not place.ends_epoch(18)
    assert place.holds_window(11) and not place.holds_window(12)


@pytest.mark.parametrize(
    "batches,depth,room",
    [(b, d, r) for b in (1, 5, 20, 30) for d in (0, 2, 10) for r in (0, 8, 10)],
)
def test_a_middle_holds_the_window_exactly_where_a_batch_has_room_before_the_tail(
    batches, depth, room
):
    place = EpochPlace(batches, depth)
    assert place.holds_window(room) == any(place.middle(p, room) for p in range(batches))


def test_a_loader_without_length_has_no_places():
    place = EpochPlace(batches=None, depth=4)
    assert not place.middle(10, room=0)
    assert not place.last_before_tail(15) and not place.ends_epoch(19)
    assert not place.holds_window(1)


def _marks(intervals: list[float], batch: int = 16) -> list[Mark]:
    marks, t = [Mark(0.0, 0, None)], 0.0
    for k, dt in enumerate(intervals, 1):
        t += dt
        marks.append(Mark(t, k * batch, None))
    return marks


def test_whole_epochs_are_timed_from_one_epoch_end_to_another():
    # Epochs of 4 steps of 10 ms; a boundary step takes 50 ms (iter(), the refill, the step).
    epoch = [0.05, 0.01, 0.01, 0.01]
    marks = _marks([0.01] + epoch + epoch + [0.05, 0.01])
    edges = [1, 5, 9]  # the marks ending an epoch's last step
    measured = whole_epochs(marks, edges)
    assert measured.epochs == 2
    assert measured.samples_per_s == pytest.approx(2 * 4 * 16 / 0.16)
    assert measured.boundary_step_s == pytest.approx(0.05)
    assert measured.step_s == pytest.approx(0.01)
    assert whole_epochs(marks, [1]) is None  # no whole epoch yet


def test_whole_epochs_split_into_a_steady_rate_and_a_boundary_cost():
    whole = WholeEpochs(epochs=2, samples_per_s=800.0, boundary_step_s=0.05, step_s=0.01)
    length = EpochLength(4, 64)
    cost = whole_epoch_cost(whole, length)
    assert cost.samples_per_s == 800.0  # the measured rate stands
    assert cost.restart_cost_s == pytest.approx(0.04)
    assert epoch_rate(cost.steady_samples_per_s, length, cost.restart_cost_s) == pytest.approx(
        800.0
    )


def test_an_epoch_too_short_for_a_window_is_measured_whole(cpu, clock):
    # One worker, one batch ahead: each batch takes 30 ms, the 1 ms step overlaps the next load,
    # and each iter() starts the worker 0.2 s late. An epoch of 3 batches then takes
    # 0.2 + 3 x 0.03 + 0.001 s, its boundary step 0.2 + 0.03 + 0.001 s against 0.03 s inside.
    workload = scheduled_workload(
        clock,
        batch_size=8,
        batch_s=0.03,
        epoch_batches=3,
        restart_s=0.2,
        step=lambda _batch: clock.sleep(0.001),
    )
    result = run_burst(
        workload,
        LoaderConfig(num_workers=1, prefetch_factor=1),
        cpu,
        BurstSettings(min_steps=4, min_seconds=0.5, max_seconds=5.0),
        usable_cpus=2,
    )
    epoch_s = 0.2 + 3 * 0.03 + 0.001
    assert result.samples_per_s == pytest.approx(3 * 8 / epoch_s)
    assert result.restart_cost_s == pytest.approx(0.201)
    assert result.steady_samples_per_s == pytest.approx(8 / 0.03)
    assert result.steady and result.window_epochs >= 2


def test_a_window_in_a_long_epoch_ends_before_the_tail(cpu, clock):
    # The step slows down early in the window, so its halves never agree: it runs on, and
    # stops before the epoch's last batches rather than crossing into the next.
    steps = []

    def step(_batch):
        steps.append(clock.now)
        clock.sleep(0.001 if len(steps) < 12 else 0.02)

    workload = scheduled_workload(clock, batch_size=8, batch_s=0.005, epoch_batches=60, step=step)
    result = run_burst(
        workload,
        LoaderConfig(num_workers=1, prefetch_factor=2),
        cpu,
        BurstSettings(min_steps=8, min_seconds=0.1, max_seconds=5.0),
        usable_cpus=2,
    )
    assert result.window_epochs == 0
    assert not result.steady
    assert len(steps) == 60 - 2  # warm-up, settle and window: up to the tail's first batch


def test_whole_epochs_are_timed_only_where_one_fits_in_the_cap():
    place = EpochPlace(batches=20, depth=4)
    # 25 more steps: the 5 left of this epoch and one whole epoch.
    assert place.whole_epoch_fits(step_s=0.01, left_s=0.25)
    assert not place.whole_epoch_fits(step_s=0.01, left_s=0.24)
    assert not EpochPlace(batches=None, depth=4).whole_epoch_fits(step_s=0.01, left_s=100.0)


def test_a_window_that_wants_more_than_the_middle_ends_before_the_tail_if_no_epoch_fits(cpu, clock):
    # A record's window runs to its cap (min_seconds = max_seconds), but the epoch's middle is
    # shorter and a whole epoch would not fit in what is left: it ends before the tail.
    steps = []

    def step(_batch):
        steps.append(clock.now)
        clock.sleep(0.001)

    workload = scheduled_workload(clock, batch_size=8, batch_s=0.01, epoch_batches=100, step=step)
    result = run_burst(
        workload,
        LoaderConfig(num_workers=1, prefetch_factor=2),
        cpu,
        BurstSettings(min_steps=8, min_seconds=1.2, max_seconds=1.2),
        usable_cpus=2,
    )
    assert result.window_epochs == 0
    assert len(steps) == 100 - 2
    assert result.samples_per_s == pytest.approx(8 / 0.01)
