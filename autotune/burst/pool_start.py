"""Room in a burst's time limit for its worker pool to start under spawn and forkserver.

Fork copies the tuning process: its workers start in milliseconds. Spawn and forkserver start each
worker from a fresh interpreter that imports torch and the dataset's module before it fetches
anything; the workers of a pool start side by side, so on few cores a large pool takes about
workers / cores such start-ups. Without this room a large spawn pool on few busy cores ran past the
fixed limit before its first batch and failed as hung."""

from __future__ import annotations

import functools
import math
import subprocess
import sys
import time

from autotune.space.config import LoaderConfig
from autotune.space.start_method import start_method

# A worker imports more than torch (the dataset's module and what it imports), on a machine the
# tuning itself keeps busy: the room is twice the bare interpreter's start-up.
MARGIN = 2.0


@functools.lru_cache(maxsize=1)
def interpreter_start_s() -> float:
    """A fresh interpreter importing torch, timed once per process: what each spawned worker does
    first."""
    began = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-c", "import torch"], capture_output=True, timeout=600, check=False
        )
    except subprocess.TimeoutExpired:
        pass  # the time it took is the answer all the same
    return time.perf_counter() - began


def start_allowance_s(config: LoaderConfig, usable_cpus: int) -> float:
    """Seconds added to a burst's time limit for `config`'s pool to start: none under fork or
    without workers."""
    if config.num_workers == 0 or start_method(config.multiprocessing_context) == "fork":
        return 0.0
    rounds = math.ceil(config.num_workers / max(1, usable_cpus))
    return MARGIN * rounds * interpreter_start_s()
