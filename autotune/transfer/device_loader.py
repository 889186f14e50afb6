"""Device-ready batches: pinned/non-blocking copies, channels-last and a side-stream prefetcher.

Modelled on timm's PrefetchLoader: on CUDA, batch i+1 is copied on a side stream while batch i
computes; on the CPU the stream context is `contextlib.suppress` and the same loop runs as a
pass-through. Unlike timm, the stream is created once per loader, not per epoch (timm#2781
leaked memory by creating one each epoch).
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any, Callable, ContextManager, Iterable, Iterator

import torch

from autotune.transfer.move import iter_tensors, move_to_device

# `phase(name)` returns a context manager around a phase of the step; the burst passes a timer.
PhaseHook = Callable[[str], ContextManager[Any]]


def _no_phase(_name: str) -> ContextManager[Any]:
    return contextlib.nullcontext()


class DeviceLoader:
    def __init__(
        self,
        loader: Iterable,
        device: torch.device | str = "cpu",
        *,
        non_blocking: bool = False,
        channels_last: bool = False,
        side_stream_prefetch: bool = False,
        phase: PhaseHook = _no_phase,
    ):
        self.loader = loader
        self.device = torch.device(device)
        self.non_blocking = non_blocking
        self.channels_last = channels_last
        self.phase = phase
        use_stream = side_stream_prefetch and self.device.type == "cuda"
        self.stream = torch.cuda.Stream(self.device) if use_stream else None
        # The loader's current iterator, so its owner can shut its workers down at a known time
        # (an exception's traceback can otherwise keep it, and its workers, alive).
        self.iterator: Iterator[Any] | None = None

    # A drop-in for the loader it wraps (as timm's PrefetchLoader): what training loops read of a
    # DataLoader passes through, so `wrapped.sampler.set_epoch(epoch)` reaches a DistributedSampler.
    def __len__(self) -> int:
        return len(self.loader)  # type: ignore[arg-type]

    @property
    def sampler(self) -> Any:
        return self.loader.sampler  # type: ignore[attr-defined]

    @property
    def batch_sampler(self) -> Any:
        return self.loader.batch_sampler  # type: ignore[attr-defined]

    @property
    def dataset(self) -> Any:
        return self.loader.dataset  # type: ignore[attr-defined]

    @property
    def batch_size(self) -> int | None:
        return self.loader.batch_size  # type: ignore[attr-defined]

    def _move(self, batch: Any) -> Any:
        return move_to_device(batch, self.device, self.non_blocking, self.channels_last)

    def __iter__(self) -> Iterator[Any]:
        stream = self.stream
        stream_context = (
            partial(torch.cuda.stream, stream) if stream is not None else contextlib.suppress
        )
        batches = self.iterator = iter(self.loader)
        pending = None
        while True:
            with self.phase("wait"):
                batch = next(batches, _END)
            if batch is _END:
                break
            # Enter the stream first so the copy is timed on the stream that performs it.
            with stream_context(), self.phase("copy"):
                batch = self._move(batch)
            if stream is None:
                yield batch
                continue
            if pending is not None:
                yield pending  # the step for `pending` is enqueued before we wait on the next copy
            current = torch.cuda.current_stream(self.device)
            current.wait_stream(stream)
            for tensor in iter_tensors(batch):
                # Allocated on the side stream, used on the current one: keep the caching
                # allocator from reusing the memory before the compute stream is done with it.
                tensor.record_stream(current)
            pending = batch
        if pending is not None:
            yield pending


_END = object()
