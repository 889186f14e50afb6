"""Recursive moves over the batch structures collate_fn produces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator, cast

import torch


def _map(fn, batch: Any) -> Any:
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # namedtuple
        return type(batch)(*(_map(fn, x) for x in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_map(fn, x) for x in batch)
    if isinstance(batch, Mapping):
        mapped = {k: _map(fn, v) for k, v in batch.items()}
        try:
            return cast(Any, type(batch))(mapped)  # Mapping itself declares no constructor
        except TypeError:  # mappings whose constructor takes other arguments (defaultdict, ...)
            return mapped
    return batch


def iter_tensors(batch: Any) -> Iterator[torch.Tensor]:
    if isinstance(batch, torch.Tensor):
        yield batch
    elif isinstance(batch, (list, tuple)):
        for x in batch:
            yield from iter_tensors(x)
    elif isinstance(batch, Mapping):
        for x in batch.values():
            yield from iter_tensors(x)


def batch_samples(batch: Any, default: int) -> int:
    """Samples in a batch: the leading dimension of its first tensor, else `default`."""
    first = next(iter_tensors(batch), None)
    return int(first.shape[0]) if first is not None and first.dim() > 0 else default


def is_image_batch(tensor: torch.Tensor) -> bool:
    """channels_last only means something for 4-D (N, C, H, W) floating-point tensors."""
    return tensor.dim() == 4 and tensor.is_floating_point()


def move_to_device(
    batch: Any, device: torch.device | str, non_blocking: bool = False, channels_last: bool = False
) -> Any:
    def move(t: torch.Tensor) -> torch.Tensor:
        t = t.to(device, non_blocking=non_blocking)
        if channels_last and is_image_batch(t):
            t = t.contiguous(memory_format=torch.channels_last)
        return t

    return _map(move, batch)
