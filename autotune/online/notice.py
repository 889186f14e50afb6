"""The two lines a user sees: when a loader settles, and at exit. They go to the "autotune.notice"
logger at INFO. Where the user configured no logging, a StreamHandler (stderr) is attached to it,
as Lightning does for its own logger, so that a plain script shows them; where the root logger has
handlers, the lines propagate to them instead. Only global rank 0 speaks (ranks.py).

Silencing: AUTOTUNE_QUIET=1, the online option `notices="none"`, or the standard
`logging.getLogger("autotune").setLevel(logging.WARNING)`."""

from __future__ import annotations

import logging
import os
from enum import Enum

from autotune.online.options import Notices
from autotune.online.ranks import find

QUIET_VAR = "AUTOTUNE_QUIET"
NAME = "autotune.notice"


class Moment(str, Enum):
    SETTLED = "settled"
    EXIT = "exit"


def quiet_by_environment() -> bool:
    return os.environ.get(QUIET_VAR, "").strip().lower() not in ("", "0", "false", "no")


def _logger() -> logging.Logger:
    log = logging.getLogger(NAME)
    # The "autotune" logger's level where the user set one; INFO otherwise (Python's default,
    # WARNING, would hide the line).
    log.setLevel(logging.NOTSET if logging.getLogger("autotune").level else logging.INFO)
    if not log.handlers and not logging.getLogger().hasHandlers():
        log.addHandler(logging.StreamHandler())
        log.propagate = False
    return log


def speaks(notices: Notices, moment: Moment) -> bool:
    if quiet_by_environment() or notices is Notices.NONE:
        return False
    if notices is Notices.SETTLED and moment is Moment.EXIT:
        return False
    return find().writes


def say(line: str, notices: Notices, moment: Moment) -> None:
    """Never raises: a notice is not worth a training run."""
    try:
        if speaks(notices, moment):
            _logger().info(line)
    except Exception:  # noqa: BLE001
        logging.getLogger("autotune").debug("autotune could not print its notice", exc_info=True)
