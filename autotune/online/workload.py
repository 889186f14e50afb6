"""What a loader loads, as a recipe's `workload` block, and when a recipe was measured for it.

Only attributes are read: asking a custom batch_sampler for its first batch (as
workload.loader_args.batch_size_of may) would draw from the sampler's RNG and change the epoch."""

from __future__ import annotations

import re
from typing import Any

from torch.utils.data import DataLoader

from autotune.space.cpus import usable_cpus

SOURCE = "autotune.DataLoader"
# The keys that must agree for a recipe to be applied without tuning.
IDENTITY = ("source", "dataset", "dataset_len", "batch_size", "drop_last", "collate_fn")


def _qualname(obj: Any) -> str:
    """A class's or function's dotted name; an instance (a partial, a callable object) by its
    class."""
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{named.__module__}.{named.__qualname__}"


def _transform(dataset: Any) -> str | None:
    """The dataset's transform as its repr (torchvision's Compose lists its steps and their
    arguments), without the addresses a default repr carries; None where it has none."""
    t = getattr(dataset, "transform", None) or getattr(dataset, "transforms", None)
    if t is None:
        return None
    try:
        text = repr(t)
    except Exception:  # noqa: BLE001 - a repr of the user's that raises: the type alone
        text = _qualname(t)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)[:1000]


def describe(loader: DataLoader, name: str) -> dict[str, Any]:
    try:
        length: int | None = len(loader.dataset)  # type: ignore[arg-type]
    except TypeError:
        length = None
    batch = (
        loader.batch_size
        if loader.batch_size is not None
        else getattr(loader.batch_sampler, "batch_size", None)
    )
    return {
        "name": name,
        "source": SOURCE,
        "dataset": _qualname(type(loader.dataset)),
        "dataset_len": length,
        "batch_size": batch,
        "drop_last": loader.drop_last,
        "collate_fn": _qualname(loader.collate_fn),
        "sampler": _qualname(
            type(loader.sampler if loader.batch_sampler is None else loader.batch_sampler)
        ),
        "transform": _transform(loader.dataset),
    }


def differences(recorded: dict[str, Any], here: dict[str, Any]) -> list[str]:
    """The identity keys on which a recipe's workload and this loader's differ."""
    return [
        f"{key} {recorded.get(key)!r} here {here.get(key)!r}"
        for key in IDENTITY
        if recorded.get(key) != here.get(key)
    ]


def identity(loader: DataLoader, base: str) -> tuple[Any, ...]:
    """The key under which this process remembers a tuning's choice: the loader's name stem and
    what it loads (a loader re-created for it, as transformers does at every evaluation, reuses
    the choice)."""
    d = describe(loader, base)
    return (base, d["sampler"], *(d[key] for key in IDENTITY))


def machine_differences(recorded: dict[str, Any], cuda: bool) -> list[str]:
    """Where the machine a recipe was measured on differs from this one in what its choice rests
    on: the usable CPUs, the ranks sharing them, the device kind."""
    cpus = usable_cpus()
    here = {
        "usable_cpus": cpus.count,
        "ranks_per_node": cpus.ranks,
        "device": "cuda" if cuda else "cpu",
    }
    there = dict(recorded)
    there["device"] = str(there.get("device") or "cpu").split(":")[0]
    return [
        f"{key} {there.get(key)!r} here {value!r}"
        for key, value in here.items()
        if key in recorded and there.get(key) != value
    ]
