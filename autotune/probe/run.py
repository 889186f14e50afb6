"""The probe sequence run before the search: device ceiling, then the loader at 1 and n workers."""

from __future__ import annotations

from typing import Any, Callable

import torch

from autotune.burst.runner import BurstSettings
from autotune.probe.ceilings import Ceilings
from autotune.probe.device import device_ceiling
from autotune.probe.loader import LoaderProbe, loader_rate
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload


# Probes are shorter than trials: they only need the order of magnitude the seeds are placed by.
# min_steps counts steps for the device probe and batches for the loader probe.
PROBE_SETTINGS = BurstSettings(min_steps=6, min_seconds=0.3, warmup_steps=2)


def probe_loader(workload: Workload, workers: int, settings: BurstSettings,
                 usable_cpus: int) -> LoaderProbe:
    return loader_rate(workload, LoaderConfig(num_workers=workers), min_seconds=settings.min_seconds,
                       min_batches=settings.min_steps, usable_cpus=usable_cpus)


def run_probes(workload: Workload, batch: Any, device: torch.device, space: SearchSpace,
               usable_cpus: int, settings: BurstSettings = PROBE_SETTINGS,
               second: Callable[[], bool] = lambda: True) -> Ceilings:
    """`second()` says whether time allows the loader probe at the predicted worker count."""
    layouts = (False, True) if space.channels_last_ok else (False,)
    ceilings = Ceilings(tuple(device_ceiling(workload, batch, device, min_seconds=settings.min_seconds,
                                             min_steps=settings.min_steps,
                                             warmup_steps=settings.warmup_steps, channels_last=cl)
                              for cl in layouts), usable_cpus)
    if space.max_workers < 1:
        return ceilings
    ceilings.add(probe_loader(workload, 1, settings, usable_cpus))
    predicted = ceilings.predicted_workers(space.max_workers)
    if predicted > 1 and second():
        ceilings.add(probe_loader(workload, predicted, settings, usable_cpus))
    return ceilings
