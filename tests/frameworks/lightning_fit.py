"""A real Lightning `Trainer.fit` on generated data, as a user would write it: nothing of autotune.
tests/test_online_frameworks.py runs it under `autotune run`. Prints FIT-DONE <global_step>."""

from __future__ import annotations

import sys

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self, length: int):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(16, generator=torch.Generator().manual_seed(index))
        return x, (x.sum() > 0).long()


class Classifier(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(16, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 3200
    gpu = len(sys.argv) > 2 and sys.argv[2] == "gpu"  # the tests marked gpu train on one
    torch.manual_seed(0)
    trainer = L.Trainer(
        max_epochs=2,
        accelerator="gpu" if gpu else "cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    loader = DataLoader(Items(items), batch_size=8, shuffle=True)
    trainer.fit(Classifier(), loader)
    print(
        f"FIT-DONE {trainer.global_step} {type(loader).__module__}.{type(loader).__name__}",
        flush=True,
    )


if __name__ == "__main__":
    main()
