"""Module-level (picklable) datasets and transforms for the stage-timing tests: spawned workers
import them by name."""

import torch
from torch.utils.data import Dataset


class AddOne:
    def __call__(self, x):
        return x + 1


class Double:
    def __call__(self, x):
        return x * 2


class TensorItems(Dataset):
    """A user's own Dataset subclass; `transform` optional."""

    def __init__(self, length=64, transform=None):
        self.length, self.transform = length, transform

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        x = torch.full((4,), float(index))
        return (self.transform(x) if self.transform is not None else x), index % 3


class BatchedItems(TensorItems):
    """A dataset that fetches a whole batch in one call."""

    def __getitems__(self, indices):
        return [self[i] for i in indices]
