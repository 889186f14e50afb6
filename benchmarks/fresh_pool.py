"""Whether a fresh worker pool's first tenth of a second runs below its later ones.

The online climb measures a candidate in windows of at least 0.1 s once its segment's warm-up
(the start-up step and the batches its workers buffered) is over. This runs the plain loop on
fresh loaders of two configurations, alternated by round, in one process: after the same
warm-up of 3 steps, WINDOWS consecutive windows of 0.1 s each, and prints each window's rate by
its index (the median over the rounds, then each round).

Run from the repository root:
    python benchmarks/fresh_pool.py [SPEC] [ROUNDS]
Writes results/bench/fresh-pool/<SPEC's kind>.out."""

from __future__ import annotations

import datetime
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.made_by import git_commit  # noqa: E402
from autotune.space.config import LoaderConfig  # noqa: E402
from autotune.workload.base import Workload  # noqa: E402
from autotune.workload.spec import WorkloadOptions, load_workload  # noqa: E402
from benchmarks.alternate import alternated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "fresh-pool"
IN_MEMORY = "mem:step_ms=2,batch=256,shape=32,length=262144"  # the bench's in-memory workload
WARM_STEPS = 3  # the climb's segment warm-up at prefetch_factor=2: the start-up step and 2 buffered
WINDOWS = 12
WINDOW_S = 0.1  # the climb's window_s


def windows(workload: Workload, config: LoaderConfig) -> list[float]:
    """Batches/s of WINDOWS consecutive windows after WARM_STEPS, on a fresh loader."""
    loader = workload.make_loader(config)
    it = iter(loader)
    for _ in range(WARM_STEPS):
        workload.step(next(it))
    rates = []
    for _ in range(WINDOWS):
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < WINDOW_S:
            workload.step(next(it))
            n += 1
        rates.append(n / (time.perf_counter() - t0))
    del it, loader
    return rates


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else IN_MEMORY
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    workload = load_workload(spec, WorkloadOptions(device="cpu"))
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    configs = [
        LoaderConfig(num_workers=0),
        LoaderConfig(num_workers=1, prefetch_factor=2, persistent_workers=True),
    ]
    seen: dict[str, list[list[float]]] = {c.label(): [] for c in configs}
    for config in alternated(configs, rounds):
        seen[config.label()].append(windows(workload, config))
    lines = [
        f"# python benchmarks/fresh_pool.py {spec} {rounds} -- commit {git_commit()},"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC,"
        f" {os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.1f}",
        f"batches/s of {WINDOWS} consecutive {WINDOW_S} s windows after {WARM_STEPS} steps of a"
        " fresh loader, by window index",
    ]
    for label, runs in seen.items():
        medians = [statistics.median(run[i] for run in runs) for i in range(WINDOWS)]
        later = statistics.median(medians[1:])
        lines.append(
            f"{label}: median by index "
            + " ".join(f"{x:.0f}" for x in medians)
            + f"; the first over the median of the others {medians[0] / later:.3f}"
        )
        lines += ["    " + " ".join(f"{x:.0f}" for x in run) for run in runs]
    print("\n".join(lines))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{spec.split(':')[0]}.out").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
