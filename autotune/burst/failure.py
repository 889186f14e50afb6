"""What a failed burst tells the user: its cause in one line (the report's status column) and
the full traceback (the run folder's failures file, and the error when every configuration fails).
"""

from __future__ import annotations

import re
import traceback

from autotune.burst.watchdog import BurstTimeout

# Cause lines longer than this are cut: the status column is read in a terminal.
MAX_CAUSE_CHARS = 240

SHM_HINT = (
    "/dev/shm is full or too small (Docker's default is 64 MiB: raise --shm-size,"
    " or use fewer workers)"
)
_SHM_PATTERNS = (
    "shared memory",
    "/dev/shm",
    "No space left on device",
    "unable to write to file </torch_",
    "Bus error",
)

_WORKER_RAISED = re.compile(r"Caught (\w+) in DataLoader worker process (\d+)")
_KILLED = re.compile(r"DataLoader worker \(pid (\d+)\) is killed by signal: ([^.]+)")
_TIMED_OUT = re.compile(r"DataLoader timed out after ([\d.]+) seconds")
_EXITED = re.compile(r"DataLoader worker \(pid\(s\) ([\d, ]+)\) exited unexpectedly")


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 3] + "..."


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text


def describe_failure(exc: BaseException) -> str:
    """One line saying what went wrong, in terms the user can act on."""
    message = str(exc)
    if isinstance(exc, BurstTimeout):
        cause = message
    elif m := _WORKER_RAISED.search(message):
        # torch re-raises a worker's exception with the worker's traceback in the message;
        # its last line is the original "Type: message".
        cause = f"{_last_line(message)} (in DataLoader worker {m.group(2)})"
    elif m := _KILLED.search(message):
        name = m.group(2).strip()
        hint = {
            "Killed": "SIGKILL, as the OOM killer sends: out of memory?",
            "Bus error": SHM_HINT,
        }.get(name, name)
        cause = f"DataLoader worker (pid {m.group(1)}) was killed by signal: {hint}"
    elif m := _TIMED_OUT.search(message):
        cause = (
            f"a DataLoader worker delivered no batch in {m.group(1)} s"
            " (a hung worker or dataset item)"
        )
    elif m := _EXITED.search(message):
        cause = (
            f"DataLoader worker (pid {m.group(1).strip()}) exited unexpectedly"
            " (killed, e.g. out of memory?)"
        )
    else:
        cause = f"{type(exc).__name__}: {_last_line(message) if message else 'no message'}"
    if any(p in message for p in _SHM_PATTERNS) and SHM_HINT not in cause:
        cause = f"{cause}: {SHM_HINT}"
    return _one_line(cause)


def failure_traceback(exc: BaseException) -> str:
    """The whole story: for a worker's exception torch's message already holds the worker's own
    traceback, after the main process's."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
