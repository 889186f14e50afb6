"""The loop benchmarks/start_cost.py times: one epoch of 100 steps of 8 items, 1 ms of storage
latency an item, `num_workers=2`, torch's DataLoader (autotune's where `autotune run`'s boot
folder has patched it). $START_LOOP_IMPORTS: modules to import first, comma-separated."""

import importlib
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __len__(self) -> int:
        return 800

    def __getitem__(self, index: int) -> torch.Tensor:
        time.sleep(0.001)
        return torch.full((8,), float(index))


if __name__ == "__main__":
    for name in filter(None, os.environ.get("START_LOOP_IMPORTS", "").split(",")):
        importlib.import_module(name)
    for batch in DataLoader(Items(), batch_size=8, num_workers=2):
        batch.sum()
