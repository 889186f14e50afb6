"""In-memory workloads: the whole dataset is tensors in RAM (a `TensorDataset`), items are views.

Fetching an item costs microseconds, so a worker process costs more than it saves: it must hand
every batch through shared memory and a queue to the training process, which is the work the
training process would otherwise do itself (pytorch#106704: 4.5 s through a DataLoader against
0.014 s by slicing). The step is an emulated accelerator (a sleep, as for `sim:`). `bulk=1` gives
the dataset a `__getitems__` that gathers a whole batch with one index per tensor, as torch's
`StackDataset` fetches batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import TensorDataset

from autotune.workload.base import Workload
from autotune.workload.simulated import SleepStep, parse_params


class BulkTensorDataset(TensorDataset):
    """A TensorDataset whose batches are gathered at once: one indexing per tensor, not one per
    item and tensor. Items come back as the per-item path gives them, so any collate_fn works."""

    def __getitems__(self, indices: list[int]) -> list[tuple[torch.Tensor, ...]]:
        index = torch.as_tensor(indices)
        return list(zip(*(t[index].unbind(0) for t in self.tensors), strict=True))


@dataclass(frozen=True)
class MemSpec:
    # A tabular case, as in pytorch#106704: 32 features per item, large batches, a fast step; the
    # epoch (1024 batches) outlasts any burst.
    step_ms: float = 2.0
    host_ms: float = 0.0
    batch: int = 256
    shape: tuple[int, ...] = (32,)
    length: int = 262144
    bulk: bool = False  # the dataset has __getitems__

    @classmethod
    def parse(cls, text: str | None) -> MemSpec:
        """'step_ms=2,host_ms=0,batch=256,shape=32,length=262144,bulk=0' (any subset)."""
        return parse_params(cls, text, "mem")


def tensor_dataset(
    length: int, shape: tuple[int, ...], bulk: bool = False, num_classes: int = 10
) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn((length, *shape), generator=generator)
    labels = torch.randint(0, num_classes, (length,), generator=generator)
    return (BulkTensorDataset if bulk else TensorDataset)(inputs, labels)


def in_memory_workload(spec: MemSpec) -> Workload:
    dataset = tensor_dataset(spec.length, spec.shape, spec.bulk)
    shape = "x".join(map(str, spec.shape))
    label = (
        f"mem(step_ms={spec.step_ms:g},batch={spec.batch},shape={shape}"
        f"{f',host_ms={spec.host_ms:g}' if spec.host_ms else ''}{',bulk' if spec.bulk else ''})"
    )
    details: dict[str, Any] = {
        "in_memory": {
            "step_ms": spec.step_ms,
            "host_ms": spec.host_ms,
            "shape": list(spec.shape),
            "bulk": spec.bulk,
        }
    }
    return Workload(
        dataset,
        spec.batch,
        SleepStep(spec.step_ms / 1000, spec.host_ms / 1000),
        name=label,
        device=torch.device("cpu"),
        details=details,
    )
