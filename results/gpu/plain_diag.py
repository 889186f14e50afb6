"""Why examples/train_plain.py's online tuning on a GPU kept num_workers=0: per batch at
num_workers=0, the fetch's wall time against the process's CPU time (torch's intra-op threads),
the loop's own work, and a plain loop's rate at 0, 3, 8 and 15 workers (3 s each, after 1 s).

    python3 results/gpu/plain_diag.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from train_plain import NoisyImages  # noqa: E402


def main() -> None:
    device = torch.device("cuda")
    print(f"torch threads {torch.get_num_threads()}, cpus {len(__import__('os').sched_getaffinity(0))}")
    model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(16, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for workers in (0, 3, 8, 15):
        loader = DataLoader(NoisyImages(4096), batch_size=32, shuffle=True, num_workers=workers,
                            persistent_workers=workers > 0)
        it = iter(loader)
        fetch_wall = fetch_cpu = work_wall = work_cpu = 0.0
        n, t_start = 0, time.perf_counter()
        t0 = None
        while True:
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                x, y = next(it)
            except StopIteration:
                it = iter(loader)
                x, y = next(it)
            w1, c1 = time.perf_counter(), time.process_time()
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            w2, c2 = time.perf_counter(), time.process_time()
            if t0 is None and w2 - t_start >= 1.0:
                t0 = w2
                continue
            if t0 is not None:
                n += 1
                fetch_wall += w1 - w0
                fetch_cpu += c1 - c0
                work_wall += w2 - w1
                work_cpu += c2 - c1
                if w2 - t0 >= 3.0:
                    break
        torch.cuda.synchronize()
        rate = n * 32 / (time.perf_counter() - t0)
        print(f"w{workers}: {rate:.0f} samples/s; per batch: fetch {1e3 * fetch_wall / n:.1f} ms wall,"
              f" {1e3 * fetch_cpu / n:.1f} ms process CPU; work {1e3 * work_wall / n:.1f} ms wall,"
              f" {1e3 * work_cpu / n:.1f} ms process CPU", flush=True)
        del it, loader


if __name__ == "__main__":
    main()
