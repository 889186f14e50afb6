"""The first trials, placed where the probes say the answer is.

Around the predicted worker count (one fewer, the prediction, one more for headroom), cheapest
first, with torch's default prefetch and the input layout the device probe found faster. On CUDA
the seeds pin memory and copy non-blocking, the usual pairing, and where the probe did not find
channels_last faster the prediction is also seeded with it: on a GPU the conversion is cheap and
a short probe can miss the gain (on an H100, ResNet-50's input pipeline ran 31% faster with it
at 16 workers while one probe saw the two layouts level).

Where the one-worker probe waited more than it computed (storage, network), the prediction is also
seeded with the deepest prefetch: torch hands batches out in order, and a deep queue rides out the
convoys that waiting workers deliver in (on 2 CPUs, 5 ms of storage latency per item: w5 pf8
sustained 781 samples/s where w6 pf2 sustained 727, and a search from pf2 seeds never reached it).
"""

from __future__ import annotations

from autotune.probe.ceilings import Ceilings
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME
from autotune.space.space import SearchSpace


def seed_configs(ceilings: Ceilings, space: SearchSpace) -> list[LoaderConfig]:
    predicted = ceilings.predicted_workers(space.max_workers)
    channels_last = space.channels_last_ok and ceilings.prefer_channels_last
    seeds = []
    for workers in sorted({max(1, predicted - 1), predicted, min(space.max_workers, predicted + 1)}):
        config = LoaderConfig(num_workers=workers, prefetch_factor=2, pin_memory=space.cuda,
                              non_blocking=space.cuda, channels_last=channels_last)
        if not space.problems(config):
            seeds.append(config)
    if ceilings.loader_waits:
        deep = LoaderConfig(num_workers=predicted, prefetch_factor=max(BY_NAME["prefetch_factor"].values),
                            pin_memory=space.cuda, non_blocking=space.cuda, channels_last=channels_last)
        if not space.problems(deep):
            seeds.append(deep)
    if space.cuda and space.channels_last_ok and not channels_last:
        other = LoaderConfig(num_workers=predicted, prefetch_factor=2, pin_memory=True,
                             non_blocking=True, channels_last=True)
        if not space.problems(other):
            seeds.append(other)
    return seeds
