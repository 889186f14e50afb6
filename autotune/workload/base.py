"""The Workload: the user's dataset, batch size and training step, as autotune runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils.data import DataLoader

from autotune.errors import WorkloadError
from autotune.space.config import LoaderConfig
from autotune.workload.device import resolve_device
from autotune.workload.model_step import ModelStep


@dataclass
class Workload:
    """`step(batch)` runs one training step on a batch already on the device (and in
    channels-last layout when that knob is on)."""

    dataset: Any
    batch_size: int
    step: Callable[[Any], Any]
    collate_fn: Callable | None = None
    sampler: Any = None
    shuffle: bool = True
    drop_last: bool = False
    name: str | None = None
    device: torch.device | None = None  # the device `step` was built for, if it was
    details: dict[str, Any] = field(default_factory=dict)  # shown in the recipe's workload block

    def __post_init__(self) -> None:
        if not isinstance(self.batch_size, int) or isinstance(self.batch_size, bool) \
                or self.batch_size <= 0:
            raise WorkloadError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not callable(self.step):
            raise WorkloadError("step must be callable: step(batch) runs one training step")
        if self.name is None:
            self.name = type(self.dataset).__name__
        if self.device is not None:
            self.device = torch.device(self.device)
        try:
            length = len(self.dataset)
        except TypeError:
            return  # iterable-style datasets have no length to check
        if length == 0:
            raise WorkloadError(f"dataset of workload '{self.name}' is empty")
        if length < self.batch_size:
            # Every step would be an epoch boundary (or, with drop_last, there would be no step):
            # nothing a burst measures would hold for training.
            raise WorkloadError(f"dataset of workload '{self.name}' has {length} items, fewer than"
                                f" one batch of {self.batch_size}")

    def make_loader(self, config: LoaderConfig, **extra: Any) -> DataLoader:
        """A torch DataLoader over this workload's data with the config's DataLoader knobs."""
        return DataLoader(self.dataset, batch_size=self.batch_size,
                          shuffle=self.shuffle if self.sampler is None else False,
                          sampler=self.sampler, collate_fn=self.collate_fn,
                          drop_last=self.drop_last, **config.dataloader_kwargs(), **extra)

    def describe(self) -> dict[str, Any]:
        try:
            length = len(self.dataset)
        except TypeError:
            length = None
        return {"name": self.name, "batch_size": self.batch_size, "dataset_length": length,
                "dataset_type": type(self.dataset).__name__, **self.details}

    @classmethod
    def from_model(cls, dataset: Any, model: torch.nn.Module, batch_size: int, *,
                   loss_fn: Callable | None = None, optimizer: torch.optim.Optimizer | None = None,
                   amp: bool = False, device: str | torch.device = "auto", name: str | None = None,
                   **workload_kwargs: Any) -> "Workload":
        """The usual forward / loss / backward / optimizer step for (inputs, targets) batches."""
        dev = resolve_device(device)
        step = ModelStep(model, dev, loss_fn=loss_fn, optimizer=optimizer, amp=amp)
        details = {"model": type(model).__name__, "amp": amp}
        return cls(dataset, batch_size, step, name=name or type(model).__name__.lower(),
                   device=dev, details=details, **workload_kwargs)
