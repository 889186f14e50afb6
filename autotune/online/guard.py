"""autotune's own code, kept out of the user's training loop: a call that raises is logged once
(WARNING, its traceback at DEBUG) and answered with a default; the guard's owner then stops
tuning. A tuner that can end a training run is worse than none."""

from __future__ import annotations

import logging
from typing import Any, Callable, TypeVar

log = logging.getLogger("autotune")
T = TypeVar("T")


def one_line(exc: BaseException) -> str:
    """`Type: message` on one line, at most 300 characters (a report cell, a log line)."""
    text = " ".join(str(exc).split()) or "(no message)"
    line = f"{type(exc).__name__}: {text}"
    return line if len(line) <= 300 else line[:297] + "..."


class Guard:
    """Runs autotune's calls for one loader. After the first error every call is skipped (its
    default returned): the state it would have read may be half-updated."""

    def __init__(self, what: str, on_error: Callable[[], Callable[[BaseException], None] | None]):
        self.what = what  # names the loader in the log line
        self.on_error = on_error  # a weak method: gives the handler, or None once its owner is gone
        self.error: str | None = None

    @property
    def tripped(self) -> bool:
        return self.error is not None

    def call(self, fn: Callable[..., T], *args: Any, default: Any = None) -> T | Any:
        if self.error is not None:
            return default
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - any error of autotune's stays out of training
            self.trip(exc)
            return default

    def trip(self, exc: BaseException) -> None:
        if self.error is not None:
            return
        self.error = one_line(exc)
        log.warning(
            "autotune stopped tuning %s after an error of its own (%s); training goes on unchanged",
            self.what,
            self.error,
        )
        log.debug("autotune's error in %s", self.what, exc_info=exc)
        try:
            handler = self.on_error()
            if handler is not None:
                handler(exc)
        except Exception as again:  # noqa: BLE001
            log.debug("autotune could not record its error", exc_info=again)
