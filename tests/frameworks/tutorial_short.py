"""A short training in the shape of PyTorch's "Data Loading Optimization" tutorial, as a user
would write it, nothing of autotune: 512 items that each wait 5 ms (a slow read), batches of 32,
a small CNN trained on the CPU, 10 epochs capped at 160 batches. The loader's arguments come from
the command line (the tutorial's baseline: none). $TUTORIAL_ITEM_S sets an item's wait (the same
dataset made slower: results/bench/repeated-runs). Prints SHORT-DONE <steps> <seconds>."""

from __future__ import annotations

import argparse
import os
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowItems(Dataset):
    def __init__(self) -> None:
        self.wait_s = float(os.environ.get("TUTORIAL_ITEM_S", "0.005"))

    def __len__(self) -> int:
        return 512

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        time.sleep(self.wait_s)
        x = torch.randn(3, 32, 32, generator=torch.Generator().manual_seed(index))
        return x, index % 10


def model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 8 * 8, 10),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--max-batches", type=int, default=160)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--prefetch", type=int, default=None)
    parser.add_argument("--persistent", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    net = model()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    kwargs = {"num_workers": args.workers}
    if args.workers:
        kwargs.update(prefetch_factor=args.prefetch, persistent_workers=args.persistent)
    loader = DataLoader(SlowItems(), batch_size=32, shuffle=True, **kwargs)
    steps, t0 = 0, time.perf_counter()
    for _ in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            optimizer.step()
            steps += 1
            if steps >= args.max_batches:
                break
        if steps >= args.max_batches:
            break
    print(f"SHORT-DONE {steps} {time.perf_counter() - t0:.2f}", flush=True)


if __name__ == "__main__":
    main()
