"""`bench --online`'s short-run case: a training of a few hundred steps at most, whose length (b)
is told (OnlineOptions.total_steps), as a script that knows its epochs tells it. Its ideal (c) is
the best hand-set configuration: the fastest of a sweep, each run over the same steps, worker
start-up and epoch restarts included. A grid of bursts cannot stand in for it: over 16-step
epochs a pool's start-up, paid once or every epoch, is a large share of the run."""

from __future__ import annotations

from typing import Callable

import torch

from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload
from benchmarks.online_grid import Ideal
from benchmarks.online_loop import train

# What a user sets by hand: a few worker counts at torch's prefetch and a deeper one, workers kept
# between epochs (which a run of short epochs needs, as the tutorials say).
HAND_SET_WORKERS = (1, 2, 4, 6, 8, 12)
HAND_SET_PREFETCH = (2, 4)


def hand_set() -> list[LoaderConfig]:
    return [
        LoaderConfig(num_workers=w, prefetch_factor=pf, persistent_workers=True)
        for w in HAND_SET_WORKERS
        for pf in HAND_SET_PREFETCH
    ]


def hand_set_best(
    key: str, workload: Workload, device: torch.device, steps: int, log: Callable[[str], None]
) -> Ideal:
    """The configuration of `hand_set()` whose `steps`-step training ran fastest. Each is run
    once; (c) runs it again in every round, so the figures compared are not this selection's."""
    seconds: dict[LoaderConfig, float] = {}
    for config in hand_set():
        times, _ = train(
            workload,
            lambda config=config: workload.make_loader(config),
            device,
            {},
            steps,
            f"{key} hand-set {config.label()}",
        )
        seconds[config] = times.span(0, steps)
    best = min(seconds, key=lambda c: seconds[c])
    ranking = ", ".join(
        f"{c.label()} {s:.2f}s" for c, s in sorted(seconds.items(), key=lambda i: i[1])[:3]
    )
    log(f"[{key}] hand-set best over {steps} steps: {ranking}")
    return Ideal(
        best,
        f"the fastest of {len(seconds)} hand-set configurations (workers"
        f" {', '.join(map(str, HAND_SET_WORKERS))} x prefetch"
        f" {', '.join(map(str, HAND_SET_PREFETCH))}, persistent), each run over the"
        f" same {steps} steps: {ranking}",
    )
