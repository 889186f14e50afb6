"""Workload.from_loader and recipe.dataloader(loader): a user's DataLoader taken as it is, its
worker_init_fn, generator, sampler, batch_sampler, collate_fn and drop_last kept in every loader
autotune builds; only the tuned knobs change."""

from __future__ import annotations

import os

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, IterableDataset, SequentialSampler

from autotune.burst.runner import BurstSettings, run_burst
from autotune.errors import RecipeError, WorkloadError
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload

CPU = torch.device("cpu")
_READY = {"opened": False}


def open_shard(worker_id: int) -> None:
    """A worker_init_fn that opens the worker's 'files': items fail in a worker without it."""
    _READY["opened"] = True


class NeedsWorkerInit(Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, i: int) -> torch.Tensor:
        in_worker = torch.utils.data.get_worker_info() is not None
        if in_worker and not _READY["opened"]:
            raise RuntimeError(
                f"worker {os.getpid()} read item {i} before worker_init_fn opened its shard"
            )
        return torch.tensor([float(i)])


def pairs(batch: list[torch.Tensor]) -> tuple[torch.Tensor, int]:
    """A custom collate_fn: the stacked items and how many there were."""
    return torch.stack(batch), len(batch)


def _indices(loader) -> list[list[int]]:
    return [[int(x) for x in batch[0].flatten()] for batch in loader]


def test_the_worker_init_fn_runs_in_every_worker_of_a_tuned_loader():
    user = DataLoader(NeedsWorkerInit(), batch_size=8, worker_init_fn=open_shard)
    with pytest.raises(RuntimeError, match="worker_init_fn"):  # the dataset does check
        list(DataLoader(NeedsWorkerInit(), batch_size=8, num_workers=2))
    workload = Workload.from_loader(user, step=lambda batch: None, name="shards")
    assert workload.batch_size == 8 and workload.worker_init_fn is open_shard
    loader = workload.make_loader(LoaderConfig(num_workers=2, prefetch_factor=4))
    assert sum(len(b) for b in loader) == 64
    result = run_burst(
        workload,
        LoaderConfig(num_workers=2),
        CPU,
        BurstSettings(min_steps=4, min_seconds=0.05, max_seconds=0.5, warmup_steps=1),
    )
    assert result.samples > 0 and result.samples_per_s > 0  # a failing item would have raised


def test_generator_sampler_collate_and_drop_last_are_kept():
    data = torch.arange(30).float().unsqueeze(1)
    dataset = torch.utils.data.TensorDataset(data)

    def user_loader() -> DataLoader:
        return DataLoader(
            dataset,
            batch_size=4,
            shuffle=True,
            drop_last=True,
            generator=torch.Generator().manual_seed(7),
            collate_fn=lambda items: (torch.stack([x for (x,) in items]), len(items)),
        )

    expected = _indices(user_loader())
    workload = Workload.from_loader(user_loader(), step=lambda batch: None)
    tuned = workload.make_loader(LoaderConfig(num_workers=0))
    assert workload.drop_last and len(tuned) == 7  # 30 // 4: the short last batch dropped
    assert _indices(tuned) == expected  # the same shuffled order, from the same seeded generator
    assert all(n == 4 for _, n in tuned)  # the user's collate_fn made these batches


def test_a_custom_batch_sampler_is_kept_and_sizes_the_batches():
    dataset = torch.utils.data.TensorDataset(torch.arange(20).float())
    sampler = BatchSampler(SequentialSampler(range(20)), batch_size=5, drop_last=False)
    user = DataLoader(dataset, batch_sampler=sampler)
    workload = Workload.from_loader(user, step=lambda batch: None)
    assert workload.batch_size == 5 and workload.batch_sampler is sampler
    tuned = workload.make_loader(LoaderConfig(num_workers=2, pin_memory=False))
    assert tuned.batch_sampler is sampler
    assert _indices(tuned) == [list(range(i, i + 5)) for i in range(0, 20, 5)]


def test_an_iterable_dataset_is_taken_without_a_sampler():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(torch.arange(12).float().unsqueeze(1))

    workload = Workload.from_loader(DataLoader(Stream(), batch_size=3), step=lambda batch: None)
    assert workload.sampler is None
    assert sum(len(b) for b in workload.make_loader(LoaderConfig())) == 12


def test_bad_loaders_get_one_line_errors():
    with pytest.raises(WorkloadError, match="needs a torch.utils.data.DataLoader"):
        Workload.from_loader([1, 2, 3], step=lambda batch: None)
    unbatched = DataLoader(torch.utils.data.TensorDataset(torch.zeros(4)), batch_size=None)
    with pytest.raises(WorkloadError, match="batch_size or a batch_sampler"):
        Workload.from_loader(unbatched, step=lambda batch: None)


def test_recipe_dataloader_rebuilds_an_existing_loader_with_the_recipes_knobs():
    recipe = Recipe.from_config(
        LoaderConfig(num_workers=2, prefetch_factor=4),
        measured={"samples_per_s": 1.0, "baseline_samples_per_s": 1.0, "speedup": 1.0},
        workload={},
        environment={},
    )
    user = DataLoader(
        NeedsWorkerInit(),
        batch_size=8,
        worker_init_fn=open_shard,
        generator=torch.Generator().manual_seed(3),
        shuffle=True,
        collate_fn=pairs,
    )
    tuned = recipe.dataloader(user)
    assert tuned.num_workers == 2 and tuned.prefetch_factor == 4
    assert tuned.worker_init_fn is open_shard and tuned.collate_fn is pairs
    assert tuned.sampler is user.sampler and tuned.generator is user.generator
    assert sum(n for _, n in tuned) == 64
    with pytest.raises(RecipeError, match="give the batch size"):
        recipe.dataloader(NeedsWorkerInit())
