"""A plain training loop that knows nothing of autotune and prints what its loader handed it, so
that a run under `autotune run` can be compared with the same script on torch's DataLoader.

    python digest_train.py ITEMS EPOCHS STEP_MS

Each epoch prints `EPOCH <e> STEPS <n> DIGEST <sha256 of every batch, in order>`; every 10th step
prints `STEP <global step>` (flushed), so that a test can tell when the loop is running. Items are
a function of their index alone, so the digest depends only on which items come in which order:
torch's sampler order (the global RNG, seeded here), whatever the worker count.
"""

from __future__ import annotations

import hashlib
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, length: int):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> torch.Tensor:
        # A little CPU per item (a 64x64 matmul) so that workers have something to do.
        x = torch.randn(64, 64, generator=torch.Generator().manual_seed(index))
        return torch.cat([torch.tensor([float(index)]), (x @ x).flatten()[:15]])


def main() -> None:
    items, epochs, step_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    torch.manual_seed(0)
    loader = DataLoader(Squares(items), batch_size=4, shuffle=True)
    step = 0
    for epoch in range(epochs):
        digest, steps = hashlib.sha256(), 0
        for batch in loader:
            digest.update(batch.numpy().tobytes())
            time.sleep(step_ms / 1000)  # the model's step
            steps += 1
            step += 1
            if step % 10 == 0:
                print(f"STEP {step}", flush=True)
        print(f"EPOCH {epoch} STEPS {steps} DIGEST {digest.hexdigest()}", flush=True)


if __name__ == "__main__":
    main()
