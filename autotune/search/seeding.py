"""The first trials, placed where the probes say the answer is.

Around the predicted worker count (one fewer, the prediction, one more for headroom), cheapest
first, with torch's default prefetch and the input layout the device probe found faster. Where a
seed's burst would time whole epochs (an epoch too short to hold a window: burst/epoch_window.py),
it runs at the shallowest prefetch instead, the depth the online climb's jump runs at there too
(decision/prefetch.py: a short epoch pays the pool's refill every few steps). On CUDA
the seeds pin memory and copy non-blocking, the usual pairing, and where the probe did not find
channels_last faster the prediction is also seeded with it: on a GPU the conversion is cheap and
a short probe can miss the gain (results/gpu/).

Where the one-worker probe waited more than it computed (storage, network), the prediction is also
seeded with the deepest prefetch: torch hands batches out in order, and a deep queue rides out the
convoys that waiting workers deliver in, and a search from shallow seeds may never reach it (the
bench's storage workloads, results/bench).

Where the fetch probe found the items in memory (or a batch cheaper to fetch in the training
process than to receive from a worker), num_workers=0 is a contender in its own right: it is
always measured (PyTorch's defaults are trial 0; on CUDA also with pinned, non-blocking copies)
and always re-measured before the choice, so a noisy first burst cannot leave it out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from autotune.decision.prefetch import first_depth
from autotune.probe.ceilings import Ceilings
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.knobs import BY_NAME
from autotune.space.space import SearchSpace

# A configuration -> whether its burst times whole epochs.
Whole = Callable[[LoaderConfig], bool]


def never_whole(config: LoaderConfig) -> bool:
    return False


def seed_configs(
    ceilings: Ceilings, space: SearchSpace, whole: Whole = never_whole
) -> list[LoaderConfig]:
    main_process = main_process_configs(ceilings, space)
    seeds = [c for c in main_process if c != PYTORCH_DEFAULTS]
    predicted = ceilings.predicted_workers(space.max_workers)
    channels_last = space.channels_last_ok and ceilings.prefer_channels_last
    for workers in sorted(
        {max(1, predicted - 1), predicted, min(space.max_workers, predicted + 1)}
    ):
        config = LoaderConfig(
            num_workers=workers,
            prefetch_factor=2,
            pin_memory=space.cuda,
            non_blocking=space.cuda,
            channels_last=channels_last,
        )
        if space.searches("prefetch_factor"):
            depth = first_depth(whole(config), space.values(BY_NAME["prefetch_factor"]), 2)
            config = replace(config, prefetch_factor=depth)
        if not space.problems(config):
            seeds.append(config)
    # A worker that waits on the training process to take items it fetched from memory is no
    # storage wait: deeper queues cannot help there.
    if ceilings.loader_waits and not main_process:
        deep = LoaderConfig(
            num_workers=predicted,
            prefetch_factor=max(BY_NAME["prefetch_factor"].values),
            pin_memory=space.cuda,
            non_blocking=space.cuda,
            channels_last=channels_last,
        )
        if not space.problems(deep):
            seeds.append(deep)
    if space.cuda and space.channels_last_ok and not channels_last:
        other = LoaderConfig(
            num_workers=predicted,
            prefetch_factor=2,
            pin_memory=True,
            non_blocking=True,
            channels_last=True,
        )
        if not space.problems(other):
            seeds.append(other)
    return seeds


def main_process_configs(ceilings: Ceilings | None, space: SearchSpace) -> list[LoaderConfig]:
    """num_workers=0 configurations to measure and re-measure, where loading in the training
    process may win: none unless the fetch probe says so."""
    fetch = ceilings.fetch if ceilings is not None else None
    if fetch is None or not (fetch.in_memory or fetch.workers_cannot_pay):
        return []
    pinned = LoaderConfig(num_workers=0, pin_memory=True, non_blocking=True)
    return [PYTORCH_DEFAULTS] + ([pinned] if space.cuda and not space.problems(pinned) else [])
