"""Ctrl-C and SIGTERM (Slurm's pre-emption) while tuning: end the current burst, keep everything
measured, write the report, and stop.

Inside a burst the first signal raises at once, so the burst ends now and its teardown kills the
workers. Anywhere else (study writes, the report, a burst's teardown) it is only recorded and the
loop stops at the next trial boundary: a journal append or a teardown is never cut in half. Later
signals are only recorded too, so an impatient second Ctrl-C cannot break the clean-up of the first.

DataLoader workers are forked inside bursts and inherit the handler: a signal sent to the whole
process group (a terminal's Ctrl-C, Slurm's SIGTERM) makes them exit quietly, as torch's worker
loop does on KeyboardInterrupt, instead of dying by signal.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

from autotune.burst.teardown import tearing_down

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequested(KeyboardInterrupt):
    """Raised inside a burst when a stop signal arrives. A KeyboardInterrupt, so the code under
    the burst (torch's workers included) treats it as the user's interrupt, never as a failure."""


class TuningInterrupted(KeyboardInterrupt):
    """The tuning was stopped by a signal; what was measured is kept in `result` (a TuneResult,
    with the report written in its run folder when there is one)."""

    def __init__(self, signal_name: str, result: Any):
        super().__init__(f"tuning interrupted by {signal_name}")
        self.signal_name = signal_name
        self.result = result

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + signal.Signals[self.signal_name].value


class StopSignals:
    def __init__(self) -> None:
        self.received: int | None = None
        self._interruptible = False

    @property
    def requested(self) -> bool:
        return self.received is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else ""

    def _handle(self, signum: int, _frame: object) -> None:
        first = self.received is None
        if first:
            self.received = signum
        if first and self._interruptible and not tearing_down():
            raise StopRequested(signal.Signals(signum).name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopSignals]:
        """Catch SIGINT and SIGTERM for the duration (main thread only: elsewhere Python cannot
        set handlers, and a Ctrl-C stays the caller's ordinary KeyboardInterrupt)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {s: signal.signal(s, self._handle) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """A stretch a stop signal may cut short (a burst): it raises StopRequested in it."""
        if self.requested:
            raise StopRequested(self.name)
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False
