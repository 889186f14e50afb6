"""The memory's key: the workload (as online/workload.py describes a loader) and the machine its
choice rests on. Any difference is a new entry."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import psutil

# The workload's fields that make it the same workload (the recipe's identity, without the
# loader's name: `autotune tune` has none, and two runs of a script may name it differently).
WORKLOAD_FIELDS = (
    "dataset",
    "dataset_len",
    "batch_size",
    "drop_last",
    "collate_fn",
    "sampler",
    "transform",
)
RAM_STEP_GIB = 1  # RAM in whole GiB: what the OS reserves moves by a few MiB between boots


def machine(gpu: str | None, ranks: int | None = None) -> dict[str, Any]:
    """The machine as the choice depends on it: the CPUs this rank may use, the ranks sharing
    them, the GPU model (None on a CPU run) and the RAM."""
    # Here, not at the top: the space package imports torch, and `autotune run` reads its options
    # (which name the memory's switch, memory.OFF) without it.
    from autotune.space.cpus import usable_cpus

    cpus = usable_cpus(ranks=ranks)
    ram_gib = psutil.virtual_memory().total / 2**30
    return {
        "usable_cpus": cpus.count,
        "ranks_per_node": cpus.ranks,
        "gpu": gpu,
        "ram_gib": int(round(ram_gib / RAM_STEP_GIB) * RAM_STEP_GIB),
    }


def workload(described: dict[str, Any]) -> dict[str, Any]:
    return {name: described.get(name) for name in WORKLOAD_FIELDS}


def digest(key: dict[str, Any]) -> str:
    """The entry's file name: a hash of the key's canonical JSON."""
    text = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]
