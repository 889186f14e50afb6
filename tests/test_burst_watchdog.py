"""The burst watchdog's SIGALRM timer keeps an alarm set before it (the user's own, or a test
runner's per-test limit): it must not cancel it, nor delay it."""

from __future__ import annotations

import signal
import time

import pytest

from autotune.burst.watchdog import BurstTimeout, time_limit

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def outer_alarm():
    """An outer alarm far in the future with a handler that records its firings; whatever a
    test leaves armed is disarmed after it, and pytest's own handler and timer come back."""
    fired: list[int] = []
    saved_timer = signal.getitimer(signal.ITIMER_REAL)
    saved = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    yield fired
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, saved)
    if saved_timer[0] > 0:
        signal.setitimer(signal.ITIMER_REAL, *saved_timer)


def test_an_outer_alarm_is_armed_again_with_the_time_it_had_left(outer_alarm):
    handler = signal.getsignal(signal.SIGALRM)
    signal.setitimer(signal.ITIMER_REAL, 1000.0)
    clock = Clock()
    with time_limit(5.0, clock=clock):
        assert signal.getsignal(signal.SIGALRM) is not handler
        assert signal.getitimer(signal.ITIMER_REAL)[0] <= 5.0
        clock.now = 300.0
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    assert 0 < left <= 700.0 and signal.getsignal(signal.SIGALRM) is handler
    assert outer_alarm == []


def test_an_outer_alarm_due_first_is_left_alone(outer_alarm):
    handler = signal.getsignal(signal.SIGALRM)
    signal.setitimer(signal.ITIMER_REAL, 1000.0)
    with time_limit(2000.0):
        assert signal.getsignal(signal.SIGALRM) is handler
        assert 990.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 1000.0
    assert 990.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 1000.0


def test_an_outer_alarm_that_fell_due_inside_fires_on_exit(outer_alarm):
    signal.setitimer(signal.ITIMER_REAL, 1000.0)
    clock = Clock()
    with time_limit(5.0, clock=clock):
        clock.now = 2000.0
    # Re-armed a microsecond ahead (a disarmed timer would read 0 and end this wait too).
    while not outer_alarm and signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        time.sleep(0.001)
    assert outer_alarm == [signal.SIGALRM]


def test_without_an_outer_alarm_none_is_left_armed(outer_alarm):
    signal.setitimer(signal.ITIMER_REAL, 0)
    with time_limit(5.0):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_block_still_ends_at_its_own_limit(outer_alarm):
    signal.setitimer(signal.ITIMER_REAL, 1000.0)
    with pytest.raises(BurstTimeout, match="exceeded its time limit of 0.05 s"):
        with time_limit(0.05):
            signal.pause()
    assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 1000.0
