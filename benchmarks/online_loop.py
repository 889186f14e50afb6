"""`autotune bench --online`'s training: the plain loop of autotune.verify.steady, for a fixed
number of steps, with the time of each step's end recorded."""

from __future__ import annotations

import time
from typing import Any, Callable

import torch

from autotune.online.loader import DataLoader as OnlineDataLoader
from autotune.verify.steady import HANG_ALLOWANCE_S, Clock, synchronize, training_feed
from autotune.workload.base import Workload
from benchmarks.online_figures import StepTimes

# A training whose steps take longer than this on average is hung (the slowest bench workload's
# defaults take well under a second a step).
HANG_STEP_S = 2.0


def train(
    workload: Workload,
    make_loader: Callable[[], Any],
    device: torch.device,
    transfer: dict[str, Any],
    steps: int,
    what: str,
    *,
    clock: Clock = time.perf_counter,
) -> tuple[StepTimes, Any]:
    """`steps` training steps on the loader `make_loader` builds, re-iterated at each epoch end as
    training does; the step times and the loader. The clock starts before the first `iter()`:
    the worker start-up is part of the training's time."""
    with training_feed(
        make_loader, device, transfer, steps * HANG_STEP_S + HANG_ALLOWANCE_S, what
    ) as (loader, batches, _):
        stamps: list[float] = []
        try:
            t0 = clock()
            for _ in range(steps):
                workload.step(next(batches))
                stamps.append(clock() - t0)
            synchronize(device)  # a CUDA step queued but not run is not done
            stamps[-1] = max(stamps[-1], clock() - t0)
        finally:
            if isinstance(loader, OnlineDataLoader):  # its inner loaders' workers, which
                loader.close()  # training_feed's teardown of torch's iterator does not see
    return StepTimes(tuple(stamps)), loader
