"""The Workload: the user's dataset, batch size and training step, as autotune runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils.data import DataLoader

from autotune.errors import WorkloadError
from autotune.space.config import LoaderConfig
from autotune.space.start_method import import_what_workers_import
from autotune.workload.device import resolve_device
from autotune.workload.loader_args import batch_size_of, kept_arguments
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
    # Kept as the user's loader had them (Workload.from_loader): a custom batch_sampler replaces
    # batch_size/shuffle/sampler/drop_last in the loaders built; batch_size then counts samples.
    batch_sampler: Any = None
    worker_init_fn: Callable | None = None
    generator: torch.Generator | None = None

    def __post_init__(self) -> None:
        if (
            not isinstance(self.batch_size, int)
            or isinstance(self.batch_size, bool)
            or self.batch_size <= 0
        ):
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
            raise WorkloadError(
                f"dataset of workload '{self.name}' has {length} items, fewer than"
                f" one batch of {self.batch_size}"
            )

    def loader_arguments(self) -> dict[str, Any]:
        """The DataLoader arguments that decide what the training sees (not how fast)."""
        batching: dict[str, Any] = (
            {"batch_sampler": self.batch_sampler}
            if self.batch_sampler is not None
            else {
                "batch_size": self.batch_size,
                "shuffle": self.shuffle if self.sampler is None else False,
                "sampler": self.sampler,
                "drop_last": self.drop_last,
            }
        )
        return {
            "dataset": self.dataset,
            "collate_fn": self.collate_fn,
            "worker_init_fn": self.worker_init_fn,
            "generator": self.generator,
            **batching,
        }

    def make_loader(self, config: LoaderConfig, **extra: Any) -> DataLoader:
        """A torch DataLoader over this workload's data with the config's DataLoader knobs."""
        import_what_workers_import(config.num_workers)
        return DataLoader(**self.loader_arguments(), **config.dataloader_kwargs(), **extra)

    def describe(self) -> dict[str, Any]:
        try:
            length = len(self.dataset)
        except TypeError:
            length = None
        return {
            "name": self.name,
            "batch_size": self.batch_size,
            "dataset_length": length,
            "dataset_type": type(self.dataset).__name__,
            **self.details,
        }

    @classmethod
    def from_loader(
        cls,
        loader: DataLoader,
        step: Callable[[Any], Any],
        *,
        name: str | None = None,
        device: str | torch.device | None = None,
        **details: Any,
    ) -> Workload:
        """An existing DataLoader taken as it is: its dataset, batch_size or batch_sampler,
        sampler, collate_fn, drop_last, worker_init_fn and generator are kept in every loader
        autotune builds; only the tuned knobs (num_workers, pin_memory, ...) change."""
        if not isinstance(loader, DataLoader):
            raise WorkloadError(
                f"from_loader needs a torch.utils.data.DataLoader, got {type(loader).__name__}"
            )
        batch_size = batch_size_of(loader)
        if batch_size is None:
            raise WorkloadError(
                "from_loader needs a batching loader: give the DataLoader a batch_size"
                " or a batch_sampler (batch_size=None turns batching off)"
            )
        kept = kept_arguments(loader)
        return cls(
            kept["dataset"],
            batch_size,
            step,
            collate_fn=kept["collate_fn"],
            sampler=kept.get("sampler"),
            shuffle=False,
            drop_last=kept.get("drop_last", False),
            batch_sampler=kept.get("batch_sampler"),
            worker_init_fn=kept["worker_init_fn"],
            generator=kept["generator"],
            name=name,
            device=None if device is None else resolve_device(device),
            details=details,
        )

    @classmethod
    def from_model(
        cls,
        dataset: Any,
        model: torch.nn.Module,
        batch_size: int,
        *,
        loss_fn: Callable | None = None,
        optimizer: torch.optim.Optimizer | None = None,
        amp: bool = False,
        device: str | torch.device = "auto",
        name: str | None = None,
        **workload_kwargs: Any,
    ) -> Workload:
        """The usual forward / loss / backward / optimizer step for (inputs, targets) batches."""
        dev = resolve_device(device)
        step = ModelStep(model, dev, loss_fn=loss_fn, optimizer=optimizer, amp=amp)
        details = {"model": type(model).__name__, "amp": amp}
        return cls(
            dataset,
            batch_size,
            step,
            name=name or type(model).__name__.lower(),
            device=dev,
            details=details,
            **workload_kwargs,
        )
