"""What a loader loads, as a recipe's `workload` block, and when a recipe was measured for it.

Only attributes are read: asking a custom batch_sampler for its first batch (as
workload.loader_args.batch_size_of may) would draw from the sampler's RNG and change the epoch."""

from __future__ import annotations

from typing import Any

from torch.utils.data import DataLoader

SOURCE = "autotune.DataLoader"
# The keys that must agree for a recipe to be applied without tuning.
IDENTITY = ("source", "dataset", "dataset_len", "batch_size", "drop_last", "collate_fn")


def _qualname(obj: Any) -> str:
    """A class's or function's dotted name; an instance (a partial, a callable object) by its
    class."""
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{named.__module__}.{named.__qualname__}"


def describe(loader: DataLoader, name: str) -> dict[str, Any]:
    try:
        length: int | None = len(loader.dataset)  # type: ignore[arg-type]
    except TypeError:
        length = None
    batch = loader.batch_size if loader.batch_size is not None else \
        getattr(loader.batch_sampler, "batch_size", None)
    return {"name": name, "source": SOURCE, "dataset": _qualname(type(loader.dataset)),
            "dataset_len": length, "batch_size": batch, "drop_last": loader.drop_last,
            "collate_fn": _qualname(loader.collate_fn),
            "sampler": _qualname(type(loader.sampler if loader.batch_sampler is None
                                      else loader.batch_sampler))}


def differences(recorded: dict[str, Any], here: dict[str, Any]) -> list[str]:
    """The identity keys on which a recipe's workload and this loader's differ."""
    return [f"{key} {recorded.get(key)!r} here {here.get(key)!r}"
            for key in IDENTITY if recorded.get(key) != here.get(key)]
