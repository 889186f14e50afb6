"""The loop's own cost of a fixed autotune.DataLoader against torch's, in one process: a trivial
dataset at num_workers=0, batch 8, two epochs a loader, 5 alternated rounds, medians. Run from the
repository root: python results/bench/repeated-runs/step_overhead.py (notes.md quotes its output
of about 13:45 UTC, 2026-11-28)."""

import statistics
import time

from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import Dataset

import autotune

FIXED = {
    "fixed": ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory"),
    "results_dir": None,
    "memory": "off",
    "notices": "none",
}


class Indices(Dataset):
    def __len__(self) -> int:
        return 4800

    def __getitem__(self, index: int) -> int:
        return index


def per_step(make) -> float:
    loader = make()
    t0 = time.perf_counter()
    for _ in range(2):
        for _batch in loader:
            pass
    return (time.perf_counter() - t0) / (2 * len(loader))


def main() -> None:
    plain, tuned = [], []
    for _ in range(5):
        plain.append(per_step(lambda: TorchDataLoader(Indices(), batch_size=8, shuffle=True)))
        tuned.append(
            per_step(
                lambda: autotune.DataLoader(Indices(), batch_size=8, shuffle=True, online=FIXED)
            )
        )
    a, b = statistics.median(plain), statistics.median(tuned)
    print(
        f"torch {a * 1e6:.1f} us/step, autotune fixed {b * 1e6:.1f} us/step,"
        f" extra {(b - a) * 1e6:.1f} us/step"
    )


if __name__ == "__main__":
    main()
