"""Where (b)'s time goes: one bench workload's training on autotune.DataLoader, step by step, next
to a plain loop on a fixed configuration (the ideal). Prints the climb's measurements and, per run
of steps on one configuration, its time and its loss against the ideal's steady step.

Run: python results/bench/online-confirm/trace.py WORKLOAD STEPS IDEAL_WORKERS IDEAL_PREFETCH [persist]
An experiment's tool, not a bench: one run each way, no alternation, nothing written."""

from __future__ import annotations

import sys
import time

import torch

from autotune.bench.workloads import select
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

key, steps, ideal_w, ideal_pf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
persist = len(sys.argv) > 5 and sys.argv[5] == "persist"
workload = load_workload(select([key], False, online=True)[0].spec, WorkloadOptions())
arguments = workload.loader_arguments()


def train(loader, n: int, traced: bool) -> list[tuple[str, float]]:
    """`n` steps, the loader re-iterated at each epoch's end; each step's configuration and time."""
    batches, rows = iter(loader), []
    last = time.perf_counter()
    for _ in range(n):
        try:
            batch = next(batches)
        except StopIteration:
            batches = iter(loader)
            batch = next(batches)
        workload.step(batch)
        now = time.perf_counter()
        rows.append((loader.config.label() if traced else "", now - last))
        last = now
    return rows


ideal = train(torch.utils.data.DataLoader(**{**arguments, "num_workers": ideal_w,
                                              "prefetch_factor": ideal_pf,
                                              "persistent_workers": persist}), steps, False)
steady = [s for _, s in ideal[50:]]
ideal_step = sum(steady) / len(steady)
registry.reset()
tuned = DataLoader(**arguments, online=OnlineOptions(results_dir=None))
rows = train(tuned, steps, True)
climb = tuned._session.policy
print(f"stop: {climb.stop_reason}; best {climb.best.config.label()}; noise cv {climb.noise_cv()}")
for config, m in climb.measured.items():
    print(f"  {config.label():24s} n={m.n} mean={m.mean:.2f} batches/s"
          f" windows={[round(r, 1) for r in m.rates]} starved={m.starved}")
tuned.close()
print(f"ideal w{ideal_w} pf{ideal_pf}: {sum(s for _, s in ideal):.2f} s, steady {1e3 * ideal_step:.1f}"
      " ms a step")
runs: list[list] = []
for i, (label, s) in enumerate(rows):
    if runs and runs[-1][0] == label:
        runs[-1][1] += 1
        runs[-1][2] += s
    else:
        runs.append([label, 1, s, i])
total_loss = 0.0
for label, n, s, first in runs:
    loss = s - n * ideal_step
    total_loss += loss
    print(f"step {first:5d} {label:24s} {n:5d} steps {s:7.2f} s {1e3 * s / n:7.1f} ms/step"
          f" loss {loss:+6.2f} s (total {total_loss:+6.2f})")
print(f"autotune.DataLoader: {sum(s for _, s in rows):.2f} s; ideal {sum(s for _, s in ideal):.2f} s")
