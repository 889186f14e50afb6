"""A plain PyTorch training script, with nothing of autotune in it. Tune its loader with

    autotune run examples/train_plain.py --epochs 2

(or `autotune run -- python examples/train_plain.py --epochs 2`): its DataLoader becomes an
autotune.DataLoader, tuned during the first epoch; the recipe and a report are written under
results/runs/ when it exits, and printed. Run it alone (`python examples/train_plain.py`) to see
it as it was written.

The data is generated: images decoded from a little CPU work per item (a stand-in for JPEG
decoding), so the number of workers matters, as it does for real image pipelines.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class NoisyImages(Dataset):
    """`length` 3x64x64 images made per item (a blur of noise: CPU work like a decode), 10
    classes."""

    def __init__(self, length: int = 4096):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        g = torch.Generator().manual_seed(index)
        image = torch.rand(3, 96, 96, generator=g)
        for _ in range(4):  # a little CPU work per item, as decoding and augmenting would be
            image = nn.functional.avg_pool2d(image[None], 3, stride=1, padding=1)[0]
        return image[:, 16:80, 16:80].contiguous(), index % 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--items", type=int, default=4096)
    parser.add_argument(
        "--start-method",
        choices=("fork", "forkserver", "spawn"),
        default=None,
        help="how DataLoader workers start (default: the platform's; macOS and Windows spawn)",
    )
    args = parser.parse_args()
    if args.start_method is not None:
        torch.multiprocessing.set_start_method(args.start_method)

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(NoisyImages(args.items), batch_size=args.batch_size, shuffle=True)
    for epoch in range(args.epochs):
        t0, seen = time.perf_counter(), 0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen += len(labels)
        rate = seen / (time.perf_counter() - t0)
        print(f"epoch {epoch}: {rate:.1f} samples/s, loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()
