"""The CPU the running pool's workers use, read at the climb's window ends (climb_types.PoolCpu).

A starved pool's rate alone does not say why its workers are slow: waiting on storage (more of
them pay) or computing on cores they share (more of them do not). Their CPU over the same time
tells the two apart, as the main process's CPU inside `__next__` does at num_workers=0
(predict.py). The workers are found once a pool, from torch's iterator (no scan of every
process), then read each window: one /proc file a worker."""

from __future__ import annotations

import time
from typing import Any, Callable

import psutil


def worker_pids(iterator: Any) -> list[int]:
    """The worker processes of a torch DataLoader iterator; none at num_workers=0."""
    return [w.pid for w in getattr(iterator, "_workers", ()) if w.pid is not None]


class WorkersCpu:
    def __init__(
        self, pids: Callable[[], list[int]], clock: Callable[[], float] = time.perf_counter
    ):
        self._pids = pids
        self._clock = clock
        self._workers: list[psutil.Process] = []

    def start(self) -> tuple[float, float] | None:
        try:
            self._workers = [psutil.Process(pid) for pid in self._pids()]
        except Exception:  # noqa: BLE001 - never the loop's concern: the prediction goes without it
            self._workers = []
        return self.read()

    def read(self) -> tuple[float, float] | None:
        if not self._workers:
            return None
        try:
            cpu = sum(sum(p.cpu_times()[:2]) for p in self._workers)
        except psutil.Error:  # a worker exited: this pool is not the one measured any more
            self._workers = []
            return None
        return cpu, self._clock()
