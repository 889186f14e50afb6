"""The probe sequence run before the search: device ceiling, one batch fetched in the main process
(per item and batched), then the loader at 1 and n workers."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import torch

from autotune.burst.runner import BurstSettings
from autotune.burst.watchdog import time_limit
from autotune.errors import AutotuneError
from autotune.probe.ceilings import Ceilings
from autotune.probe.device import DeviceProbe, device_ceiling
from autotune.probe.fetch import measure_fetch
from autotune.probe.loader import LoaderProbe, loader_rate
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload

T = TypeVar("T")

# Probes are shorter than trials: they only need the order of magnitude the seeds are placed by.
# min_steps counts steps for the device probe and batches for the loader probe.
PROBE_SETTINGS = BurstSettings(min_steps=6, min_seconds=0.3, warmup_steps=2)


def probe_loader(
    workload: Workload,
    workers: int | LoaderConfig,
    settings: BurstSettings,
    usable_cpus: int,
    limit_s: float | None = None,
) -> LoaderProbe:
    """The loader alone at `workers` with the other DataLoader arguments at torch's defaults (the
    worker model's probes), or at a whole configuration's DataLoader arguments."""
    if isinstance(workers, LoaderConfig):
        config, at = workers.loader_part(), workers.loader_part().label()
    else:
        config, at = LoaderConfig(num_workers=workers), f"{workers} worker{'s' * (workers != 1)}"
    return _limited(
        limit_s,
        f"the loader probe at {at}",
        lambda: loader_rate(
            workload,
            config,
            min_seconds=settings.min_seconds,
            min_batches=settings.min_steps,
            usable_cpus=usable_cpus,
        ),
    )


def _limited(limit_s: float | None, what: str, measure: Callable[[], T]) -> T:
    """One probe under its own time limit: a cold GPU's first steps (CUDA module loading, cuDNN
    autotuning: seconds for a large model) must not eat the limit of the probes after it."""
    with time_limit(limit_s, what):
        return measure()


def _unless_failed(measure: Callable[[], T]) -> T | None:
    """None where the probe failed: a dataset or loader that fails here fails its trials too,
    which say why."""
    try:
        return measure()
    except AutotuneError:
        raise
    except Exception:  # noqa: BLE001
        return None


def run_probes(
    workload: Workload,
    batch: Any,
    device: torch.device,
    space: SearchSpace,
    usable_cpus: int,
    settings: BurstSettings = PROBE_SETTINGS,
    second: Callable[[], bool] = lambda: True,
    limit_s: float | None = None,
    warmed_up: Callable[[float], None] = lambda _s: None,
) -> Ceilings:
    """`second()` says whether time allows the loader probe at the predicted worker count;
    `warmed_up(seconds)` hears the device's one-time warm-up as soon as it is known. Each probe
    runs under `limit_s`; a loader probe that fails leaves the device ceiling measured (the search
    then starts from the worker count probed so far)."""
    layouts = (False, True) if space.channels_last_ok else (False,)

    def device_probe(cl: bool) -> DeviceProbe:
        return _limited(
            limit_s,
            "the device probe" + (" (channels_last)" if cl else ""),
            lambda: device_ceiling(
                workload,
                batch,
                device,
                min_seconds=settings.min_seconds,
                min_steps=settings.min_steps,
                warmup_steps=settings.warmup_steps,
                channels_last=cl,
            ),
        )

    ceilings = Ceilings(tuple(device_probe(cl) for cl in layouts), usable_cpus)
    warmed_up(ceilings.warmup_s)
    ceilings.fetched = _unless_failed(
        lambda: _limited(limit_s, "the fetch probe", lambda: measure_fetch(workload))
    )
    if space.max_workers < 1:
        return ceilings

    def loader_probe(workers: int) -> None:
        ceilings.add(probe_loader(workload, workers, settings, usable_cpus, limit_s))

    def loader_probes() -> None:
        loader_probe(1)
        predicted = ceilings.predicted_workers(space.max_workers)
        if predicted > 1 and second():
            loader_probe(predicted)

    _unless_failed(loader_probes)
    return ceilings
