"""A time limit on a burst: a hung worker or step must fail its trial, not stall the tuning.

Two layers catch a hang. The DataLoader's own `timeout` makes torch raise in the main process when
a worker delivers no batch in time. This watchdog, a SIGALRM timer over the whole burst, also
catches a hang in the main process itself (num_workers=0, or the step). Python runs signal
handlers in the main thread only, so off the main thread the watchdog is off and the DataLoader
timeout is the only guard.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Callable, Iterator

# An outer alarm that fell due inside the block is re-armed this soon.
_OVERDUE_S = 1e-6


class BurstTimeout(Exception):
    """The burst ran past its time limit."""


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(
    seconds: float | None, what: str = "burst", *, clock: Callable[[], float] = time.monotonic
) -> Iterator[None]:
    """Raise BurstTimeout in the main thread if the block runs longer than `seconds`.

    Blocking calls (sleep, lock and queue waits) are interrupted, so a worker that never answers
    or a step that sleeps forever both end here. An alarm already set (the caller's own, or a
    test runner's per-test limit) is kept: if it is due first, it stays armed alone; otherwise
    it is armed again on exit with the time it had left, and its handler restored."""
    if seconds is None or not hasattr(signal, "setitimer") or not _on_main_thread():
        yield
        return
    outer_delay, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    if 0 < outer_delay <= seconds:
        # The outer alarm ends the block first anyway: replacing it would only delay it.
        yield
        return

    armed = [True]

    def expire(_signum: int, _frame: object) -> None:
        # Once the block is over, a late alarm must not cut the restoring below short.
        if armed[0]:
            raise BurstTimeout(
                f"{what} exceeded its time limit of {seconds:g} s"
                " (a hung worker, dataset item or step)"
            )

    started = clock()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay > 0:
            # Overdue while the burst ran: it fires at once (a zero delay would disarm it).
            left = max(outer_delay - (clock() - started), _OVERDUE_S)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)
