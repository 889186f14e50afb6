"""What a fresh pool's restart at an epoch's end costs, against what the online climb reads of it.

The climb's epoch model (decision/epoch_time.py) prices a restart without persistent_workers at
the pool's measured start-up: iter() of its loader to its first batch. This runs one workload's
epochs with and without persistent workers, alternated by round, in one process, and prints for
each setting: the epoch's wall time (its first iter() to its StopIteration), iter() to the first
batch, and the epoch's slowest step with its position. An epoch's time without persistence less
its time with it is what a restart really costs; iter() to the first batch is what the climb
counts. Each loader's first epoch is left out (a persistent pool starts in it too).

Run from the repository root:
    python benchmarks/restart_cost.py [SPEC] [WORKERS] [EPOCHS] [ROUNDS]
Writes results/bench/restart-cost/<SPEC's kind>-w<WORKERS>.out."""

from __future__ import annotations

import datetime
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.made_by import git_commit  # noqa: E402
from autotune.space.config import LoaderConfig  # noqa: E402
from autotune.workload.base import Workload  # noqa: E402
from autotune.workload.spec import WorkloadOptions, load_workload  # noqa: E402
from benchmarks.alternate import round_order  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "restart-cost"
IN_MEMORY = "mem:step_ms=2,batch=256,shape=32,length=262144"  # the bench's in-memory workload


def epochs(workload: Workload, config: LoaderConfig, n: int) -> list[dict[str, float]]:
    """`n` epochs of the plain loop on one loader: each one's wall time, iter() to its first
    batch, and its slowest step (seconds) and that step's index."""
    loader = workload.make_loader(config)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        it = iter(loader)
        batch = next(it)
        first = time.perf_counter() - t0
        slowest, at, i = 0.0, 0, 0
        while True:
            t = time.perf_counter()
            workload.step(batch)
            try:
                batch = next(it)
            except StopIteration:
                break
            i += 1
            if (step := time.perf_counter() - t) > slowest:
                slowest, at = step, i
        out.append(dict(epoch_s=time.perf_counter() - t0, first_s=first, slowest_s=slowest, at=at))
    del loader
    return out


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else IN_MEMORY
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    workload = load_workload(spec, WorkloadOptions(device="cpu"))
    torch.set_num_threads(1)
    lines = [
        f"# python benchmarks/restart_cost.py {spec} {workers} {n} {rounds} -- commit"
        f" {git_commit()}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC,"
        f" {os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.1f}"
    ]
    seen: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for r in range(rounds):
        for persist in round_order((False, True), r):
            config = LoaderConfig(
                num_workers=workers, prefetch_factor=2, persistent_workers=persist
            )
            got = epochs(workload, config, n)[1:]  # a loader's first epoch starts its pool
            seen[persist] += got
            lines.append(
                f"round {r + 1} {config.label():18s} epochs "
                + " ".join(f"{e['epoch_s']:.3f}" for e in got)
                + " s; iter->first "
                + " ".join(f"{1000 * e['first_s']:.1f}" for e in got)
                + " ms; slowest step "
                + " ".join(f"{1000 * e['slowest_s']:.0f}@{e['at']:.0f}" for e in got)
                + " ms@step"
            )

    def median(persist: bool, key: str) -> float:
        return statistics.median(e[key] for e in seen[persist])

    restart = median(False, "epoch_s") - median(True, "epoch_s")
    counted = median(False, "first_s")
    epoch = median(True, "epoch_s")
    lines += [
        f"median epoch: {median(False, 'epoch_s'):.3f} s without persistent workers,"
        f" {median(True, 'epoch_s'):.3f} s with them",
        f"a restart costs {1000 * restart:.0f} ms an epoch ({100 * restart / epoch:.1f}% of one);"
        f" the climb's start-up, iter() to the first batch: {1000 * counted:.0f} ms"
        f" ({100 * counted / epoch:.1f}%)",
        f"median slowest step: {1000 * median(False, 'slowest_s'):.0f} ms without,"
        f" {1000 * median(True, 'slowest_s'):.0f} ms with",
    ]
    print("\n".join(lines))
    OUT.mkdir(parents=True, exist_ok=True)
    name = f"{spec.split(':')[0]}-w{workers}.out"
    (OUT / name).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
