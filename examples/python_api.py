"""The README's Python API example, runnable as it stands:

    python examples/python_api.py --budget 20

It tunes a small generated dataset's loader with `autotune.tune`, builds the tuned DataLoader,
saves the recipe and applies it again as a training script would. The run folder goes under
results/runs/ in the working directory.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset

import autotune


class NoisyImages(Dataset):
    """3x32x32 images made per item (a little CPU work, like a decode), 10 classes."""

    def __init__(self, length: int = 1024):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image = torch.rand(3, 48, 48, generator=torch.Generator().manual_seed(index))
        image = nn.functional.avg_pool2d(image[None], 3, stride=1, padding=1)[0]
        return image[:, 8:40, 8:40].contiguous(), index % 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of tuning")
    args = parser.parse_args()

    dataset = NoisyImages()
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
    workload = autotune.Workload.from_model(dataset, model, batch_size=64)
    result = autotune.tune(workload, budget_s=args.budget)
    loader = result.loader()  # a torch DataLoader with the tuned arguments
    print("tuned DataLoader arguments:", result.recipe.dataloader_kwargs())

    # Later, in the training script:
    path = result.recipe.save(Path(tempfile.mkdtemp()) / "recipe.json")
    recipe = autotune.load_recipe(path)
    loader = recipe.dataloader(dataset, batch_size=64, shuffle=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    batches = sum(
        1 for _ in recipe.wrap(loader, device)
    )  # non_blocking, channels_last, side stream
    print(f"one epoch through the recipe's loader: {batches} batches on {device}")


if __name__ == "__main__":  # spawn and forkserver workers import this file: the guard is needed
    main()
