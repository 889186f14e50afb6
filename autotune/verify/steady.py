"""An independent steady-rate measurement: one configuration run the way a training script runs it.

This deliberately does not measure the way autotune's burst runner does (autotune/burst/runner.py),
so that it can check it; it shares only the runner's epoch iterator. It is the plain loop a user
writes, and nothing else:

    loader = workload.make_loader(config)
    for batch in DeviceLoader(loader, device, **config.transfer_kwargs()):   # recipe.wrap(...)
        workload.step(batch)

re-iterating the loader whenever an epoch ends (for non-persistent workers that restarts them:
a real cost that a long training pays too). No phase clocks, no samplers, no drain, no
backlog accounting: the only instrument is a clock read at the two ends of the timed window.

Timeline of one measurement:
  settle   the worker start-up, then steps until the prefetch buffer has been cycled: at least
           `settle_s` seconds and at least 3 x num_workers x prefetch_factor batches, so that
           neither the batches buffered during start-up nor a buffer still filling is timed;
  window   `seconds` of steps (CUDA synchronized at both ends where the device is CUDA); the rate
           is the samples consumed over the window's wall time;
  teardown the workers are shut down with the project's own helpers (burst/teardown.py), so none
           is left behind whatever happened.
"""

from __future__ import annotations

import contextlib
import statistics
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

import torch

from autotune.burst.runner import Epochs
from autotune.burst.teardown import no_strays, release_loader, shielded
from autotune.burst.watchdog import time_limit
from autotune.space.config import LoaderConfig
from autotune.transfer.device_loader import DeviceLoader
from autotune.transfer.move import batch_samples
from autotune.workload.base import Workload

SETTLE_S = 2.0  # the least settle phase, in seconds
SETTLE_BUFFER_CYCLES = 3  # and the least, in batches: this many times the batches in flight
DEFAULT_SECONDS = 20.0
DEFAULT_ROUNDS = 3
# A measurement that takes longer than this (beyond its settle and window) is hung.
HANG_ALLOWANCE_S = 120.0

Clock = Callable[[], float]


@dataclass(frozen=True)
class SteadyResult:
    config: LoaderConfig
    samples_per_s: float
    samples: int  # consumed in the window
    steps: int  # in the window
    window_s: float
    startup_s: float  # iter(loader) to the first batch: the worker start-up
    settle_s: float  # the first batch to the window's start
    settle_steps: int
    epochs: int  # iter() calls on the loader over the whole measurement (1: no epoch ended)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["config"] = self.config.as_dict()
        return data


def settle_batches(config: LoaderConfig) -> int:
    """The least number of settle steps: the prefetch buffer cycled SETTLE_BUFFER_CYCLES times."""
    return SETTLE_BUFFER_CYCLES * config.prefetch_depth


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def training_feed(
    make_loader: Callable[[], Any],
    device: torch.device,
    transfer: dict[str, Any],
    limit_s: float,
    what: str,
) -> Iterator[tuple[Any, Iterator[Any], Epochs]]:
    """(loader, its batches, their epochs) for the plain loop: the loader `make_loader` builds,
    through DeviceLoader with the transfer knobs, re-iterated at each epoch end. On exit its
    workers are shut down whatever happened; a loop running longer than `limit_s` fails with
    BurstTimeout on the main thread."""
    with warnings.catch_warnings():
        # More workers than cores is a configuration being measured, not a mistake to warn about
        # (torch warns as the loader is built).
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        with no_strays():
            loader = make_loader()
            feed = DeviceLoader(loader, device, **transfer)
            epochs = Epochs(feed)
            batches = iter(epochs)
            failed = True
            try:
                with time_limit(limit_s, what):
                    yield loader, batches, epochs
                failed = False
            finally:
                with shielded():  # the workers go, whatever happened
                    try:
                        release_loader(loader, feed.iterator, force=failed)
                    finally:
                        batches.close()
                        del batches, epochs, feed, loader


def measure_steady(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device | str,
    seconds: float = DEFAULT_SECONDS,
    *,
    settle_s: float = SETTLE_S,
    clock: Clock = time.perf_counter,
    time_limit_s: float | None = None,
) -> SteadyResult:
    """The rate `config` sustains on `workload`: samples per second over a window of `seconds`
    after the settle phase. `time_limit_s` (default: generous, from the settle and the window)
    fails a hung measurement with BurstTimeout on the main thread."""
    if seconds <= 0:
        raise ValueError("seconds must be > 0")
    device = torch.device(device)
    limit = (
        time_limit_s if time_limit_s is not None else 2 * (settle_s + seconds) + HANG_ALLOWANCE_S
    )
    with training_feed(
        lambda: workload.make_loader(config),
        device,
        config.transfer_kwargs(),
        limit,
        f"steady measurement of {config.label()}",
    ) as (_, batches, epochs):
        return _loop(workload, config, device, batches, epochs, seconds, settle_s, clock)


def _loop(
    workload: Workload,
    config: LoaderConfig,
    device: torch.device,
    batches: Iterator[Any],
    epochs: Epochs,
    seconds: float,
    settle_s: float,
    clock: Clock,
) -> SteadyResult:
    t_begin = clock()
    batch = next(batches)
    t_first = clock()
    workload.step(batch)
    del batch
    least = settle_batches(config)
    settled = 1
    while settled < least or clock() - t_first < settle_s:
        workload.step(next(batches))
        settled += 1
    synchronize(device)
    t_start = clock()
    samples = steps = 0
    while True:
        batch = next(batches)
        workload.step(batch)
        samples += batch_samples(batch, workload.batch_size)
        steps += 1
        del batch
        if clock() - t_start >= seconds:
            break
    synchronize(device)
    t_end = clock()
    window = max(t_end - t_start, 1e-12)
    return SteadyResult(
        config=config,
        samples_per_s=samples / window,
        samples=samples,
        steps=steps,
        window_s=window,
        startup_s=t_first - t_begin,
        settle_s=t_start - t_first,
        settle_steps=settled,
        epochs=epochs.epochs,
    )


Measure = Callable[..., SteadyResult]
OnResult = Callable[[int, SteadyResult], None]  # (round, result)


def alternate(
    workload: Workload,
    device: torch.device | str,
    configs: list[LoaderConfig],
    seconds: float = DEFAULT_SECONDS,
    rounds: int = DEFAULT_ROUNDS,
    *,
    settle_s: float = SETTLE_S,
    on_result: OnResult | None = None,
    measure: Measure | None = None,
) -> dict[LoaderConfig, list[float]]:
    """Each distinct configuration measured `rounds` times, alternating: A, B, A, B, ... so that a
    slow patch of a shared machine falls on all of them alike. Returns the rates per
    configuration, in round order."""
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    measure = measure or measure_steady
    distinct = list(dict.fromkeys(configs))
    rates: dict[LoaderConfig, list[float]] = {c: [] for c in distinct}
    for r in range(rounds):
        for config in distinct:
            result = measure(workload, config, device, seconds, settle_s=settle_s)
            rates[config].append(result.samples_per_s)
            if on_result is not None:
                on_result(r, result)
    return rates


@dataclass(frozen=True)
class SteadySummary:
    config: LoaderConfig
    rates: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    @property
    def spread(self) -> float:
        """(max - min) / median: how far the rounds disagree."""
        return (max(self.rates) - min(self.rates)) / self.median if self.median else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.config.label(),
            "params": self.config.as_dict(),
            "samples_per_s": [round(r, 2) for r in self.rates],
            "median": round(self.median, 2),
            "spread": round(self.spread, 4),
        }


def summarize(rates: dict[LoaderConfig, list[float]]) -> dict[LoaderConfig, SteadySummary]:
    """The median of each configuration's rounds (and their spread)."""
    return {c: SteadySummary(c, tuple(r)) for c, r in rates.items() if r}
