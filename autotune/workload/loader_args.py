"""What an existing DataLoader was built with, beyond the knobs autotune tunes.

A user's loader carries choices that decide *what* the training sees: its dataset, batch size or
custom batch_sampler, sampler (and so shuffling), collate_fn, drop_last, worker_init_fn and
generator. A tuned loader must keep every one of them and change only how fast batches come.
"""

from __future__ import annotations

from typing import Any

from torch.utils.data import DataLoader, IterableDataset


def custom_batch_sampler(loader: DataLoader) -> bool:
    """Whether the user passed a batch_sampler (torch then leaves batch_size None)."""
    return loader.batch_size is None and loader.batch_sampler is not None


def kept_arguments(loader: DataLoader) -> dict[str, Any]:
    """The DataLoader arguments that rebuild `loader`'s batches, as keyword arguments."""
    kept: dict[str, Any] = {
        "dataset": loader.dataset,
        "collate_fn": loader.collate_fn,
        "worker_init_fn": loader.worker_init_fn,
        "generator": loader.generator,
    }
    if custom_batch_sampler(loader):
        kept["batch_sampler"] = loader.batch_sampler
    else:
        kept.update(batch_size=loader.batch_size, drop_last=loader.drop_last)
        if not isinstance(loader.dataset, IterableDataset):  # torch refuses a sampler for those
            kept["sampler"] = loader.sampler
    return kept


def batch_size_of(loader: DataLoader) -> int | None:
    """Samples per batch: the loader's batch_size, or its custom batch_sampler's (its attribute,
    else the size of its first batch); None where batching is off."""
    if loader.batch_size is not None:
        return loader.batch_size
    sampler = loader.batch_sampler
    if sampler is None:
        return None
    size = getattr(sampler, "batch_size", None)
    return int(size) if isinstance(size, int) else len(next(iter(sampler)))
