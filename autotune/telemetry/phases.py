"""Per-step phase times: wall clock always, device time from CUDA events on a GPU.

Wall time says where the host thread blocked (waiting for the loader, enqueueing work); CUDA
events say how long the device spent copying and computing, which wall time cannot see because
kernels run asynchronously.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from typing import Any, Callable, ContextManager, Iterator

import torch

PHASES = ("wait", "copy", "compute")


def stack_phases(
    *hooks: Callable[[str], ContextManager[Any]],
) -> Callable[[str], ContextManager[Any]]:
    """One phase hook that enters each of `hooks` in order (e.g. an NVTX range around a timer)."""

    @contextlib.contextmanager
    def phase(name: str) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for hook in hooks:
                stack.enter_context(hook(name))
            yield

    return phase


class PhaseClock:
    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.device = device
        # Running totals, not lists: the burst reads the wait total at every step.
        self.wall: dict[str, float] = defaultdict(float)
        self._events: dict[str, list[tuple]] = defaultdict(list)
        self.recording = True

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        if not self.recording:
            yield
            return
        start_event = end_event = None
        if self.cuda:
            start_event = torch.cuda.Event(enable_timing=True)
            end_event = torch.cuda.Event(enable_timing=True)
            start_event.record()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.wall[name] += time.perf_counter() - t0
            if end_event is not None:
                end_event.record()
                self._events[name].append((start_event, end_event))

    def reset(self) -> None:
        self.wall.clear()
        self._events.clear()

    def wall_total(self, name: str) -> float:
        return self.wall.get(name, 0.0)

    def device_total(self, name: str) -> float | None:
        """Seconds the device spent in this phase; None on the CPU, where there are no events."""
        if not self.cuda:
            return None
        torch.cuda.synchronize(self.device)
        return sum(s.elapsed_time(e) for s, e in self._events.get(name, ())) / 1000.0

    def synchronize(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)
