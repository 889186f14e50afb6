"""Results written however the process ends: at exit (atexit), and on SIGTERM (a preemption, a
scancel, `autotune run` passing one on), whose default action would end the process without
running atexit. A script's own SIGTERM handler is left alone: it decides, and atexit runs if it
exits. SIGKILL leaves what was written before it (the outbox checkpoints while exploring)."""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
from typing import Protocol

log = logging.getLogger("autotune")


class Writer(Protocol):
    def at_exit(self) -> object: ...


_writers: list[Writer] = []
_owner: int | None = None  # the process that registered: forked workers inherit the handler


def register(writer: Writer) -> None:
    global _owner
    if _owner != os.getpid():  # first in this process (a forked child starts its own list)
        _writers.clear()
        _owner = os.getpid()
        atexit.register(write_all)
        _catch_sigterm()
    if writer not in _writers:
        _writers.append(writer)


def write_all() -> None:
    if _owner != os.getpid():
        return
    for writer in list(_writers):
        try:
            writer.at_exit()
        except Exception:  # noqa: BLE001 - an exiting training keeps its own exit status
            log.debug("autotune could not write its results at exit", exc_info=True)


def _catch_sigterm() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        pass


def _on_sigterm(signum: int, frame: object) -> None:
    if _owner == os.getpid():
        # A second SIGTERM (scancel signals every process of the step) must not cut the writing.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        write_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)  # the default action: the exit status says SIGTERM
