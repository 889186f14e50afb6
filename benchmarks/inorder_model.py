"""The steady rate of torch's DataLoader over a simulated workload, computed rather than measured:
the optimum a tuner's choice is judged against where the windows it measures scatter more than the
candidates differ (items that straggle on storage).

The model is torch's own bookkeeping, step by step. Batch k goes to worker k mod W; at most
W x prefetch_factor batches are outstanding; they are handed out in order (in_order=True), so the
loop waits for batch k even where later ones are made. A worker makes its batches one after
another, each taking the sum of its items' storage and CPU times (a straggler's storage time is
straggle_x times the others', the simulated dataset's rule on shuffled indices) plus the collate.
The loop takes batch k, sends batch k + W x prefetch_factor to its worker, then steps for
step_ms + host_ms. At num_workers=0 the loop fetches each batch itself, then steps.

    rate(W, P) = steps / (time the loop hands out its last batch, from its first one)

capped by the cores: the workers' CPU per batch (items' cpu_ms and the collate) over the usable
CPUs left beside the loop's own host_ms, `cpu_ceiling`.

Assumes a steady pipeline (no pool start-up, no opens: the first W x P batches are left out),
workers that never wait for a core below that cap, and nothing paid by the main process per
batch (unpickling, the queues): measured rates sit a few percent below these.

Run from the repository root: python benchmarks/inorder_model.py WORKLOAD... [--workers 4,8,12]
[--cpus 2] (bench workload keys of `sim:` workloads); it prints a table per workload and writes
results/bench/inorder-model/<key>.out."""

from __future__ import annotations

import argparse
import datetime
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.workload.simulated import SimSpec  # noqa: E402
from benchmarks.provenance import git_commit  # noqa: E402
from benchmarks.workloads import BENCH_WORKLOADS  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "bench" / "inorder-model"
DEPTHS = (1, 2, 4, 8)
SEEDS = 5  # shuffles averaged: one shuffle's stragglers may bunch
STEPS = 3000  # the online bench's training length


def batch_seconds(spec: SimSpec, batches: int, seed: int) -> list[float]:
    """Each batch's time in one worker, over one shuffle of the dataset's indices (a sampler
    that wraps around where the batches outrun the dataset)."""
    order = list(range(spec.length))
    random.Random(seed).shuffle(order)
    every = spec.straggle_every
    out = []
    for k in range(batches):
        total = spec.collate_ms
        for j in range(k * spec.batch, (k + 1) * spec.batch):
            index = order[j % spec.length]
            straggles = every and index % every == every - 1
            total += spec.io_ms * (spec.straggle_x if straggles else 1.0) + spec.cpu_ms
        out.append(total / 1000)
    return out


def delivered_rate(times: Sequence[float], workers: int, depth: int, step_s: float) -> float:
    """Batches/s the loop takes, torch's in-order hand-out over batches of `times`, after the
    first workers x depth (the pool's fill)."""
    if workers == 0:
        return 1 / (statistics.fmean(times) + step_s)
    ahead = workers * depth
    steps = len(times) - ahead  # every batch sent is handed out
    if steps <= 2 * ahead:
        raise ValueError(f"{len(times)} batches are too few for {workers} x {depth} in flight")
    free = [0.0] * workers  # when each worker finishes what it was sent
    ready = [0.0] * len(times)

    def send(k: int, at: float) -> None:
        w = k % workers
        free[w] = ready[k] = max(free[w], at) + times[k]

    for k in range(ahead):
        send(k, 0.0)
    now, handed = 0.0, []
    for k in range(steps):
        now = max(now, ready[k])
        handed.append(now)
        send(k + ahead, now)
        now += step_s
    # From the batch after the fill's to the last: (steps - 1 - ahead) steps.
    return (steps - 1 - ahead) / (handed[-1] - handed[ahead])


def cpu_ceiling(spec: SimSpec, cpus: float) -> float:
    """Batches/s the cores allow the workers: their CPU per batch over the CPUs the loop's own
    host_ms leaves them (inf where the items take no CPU)."""
    cpu_s = (spec.batch * spec.cpu_ms + spec.collate_ms) / 1000
    step_s = (spec.step_ms + spec.host_ms) / 1000
    host_share = spec.host_ms / 1000 / step_s if step_s else 0.0
    return (cpus - host_share) / cpu_s if cpu_s else float("inf")


@dataclass(frozen=True)
class Point:
    workers: int
    depth: int  # prefetch_factor; 0 at num_workers=0
    batches_per_s: float
    cpu_bound: bool  # the cores' cap, not the hand-out, sets the rate

    @property
    def label(self) -> str:
        return "w0" if self.workers == 0 else f"w{self.workers} pf{self.depth}"


def grid(spec: SimSpec, workers: Sequence[int], cpus: float, seeds: int = SEEDS) -> list[Point]:
    """Every (workers, depth) of `workers` x DEPTHS, each the mean over `seeds` shuffles."""
    step_s = (spec.step_ms + spec.host_ms) / 1000
    ceiling = cpu_ceiling(spec, cpus)
    runs = [
        batch_seconds(spec, STEPS + max(workers, default=0) * max(DEPTHS), s) for s in range(seeds)
    ]
    points = []
    for w in workers:
        for depth in (0,) if w == 0 else DEPTHS:
            rate = statistics.fmean(delivered_rate(t, w, depth, step_s) for t in runs)
            points.append(Point(w, depth, min(rate, ceiling), rate > ceiling))
    return points


def table(key: str, spec: SimSpec, points: list[Point]) -> list[str]:
    best = max(p.batches_per_s for p in points)
    step_rate = 1000 / (spec.step_ms + spec.host_ms)
    lines = [
        f"## {key}: {spec.batch} items a batch; the step alone allows {step_rate:.1f} batches/s",
        "| workers | " + " | ".join(f"pf{d}" for d in DEPTHS) + " |",
        "|---:|" + "---:|" * len(DEPTHS),
    ]
    for w in sorted({p.workers for p in points}):
        row = {p.depth: p for p in points if p.workers == w}
        cells = []
        for d in (0,) if w == 0 else DEPTHS:
            p = row[d]
            mark = " *" if p.batches_per_s >= 0.99 * best else ""
            cells.append(f"{p.batches_per_s:.1f}{' (cores)' if p.cpu_bound else ''}{mark}")
        lines.append(f"| {w} | " + " | ".join(cells + [""] * (len(DEPTHS) - len(cells))) + " |")
    lines.append("batches/s; * within 1% of the best point")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--workers", default="0,1,2,4,6,8,10,11,12,14,16,20")
    parser.add_argument("--cpus", type=float, default=2.0)
    args = parser.parse_args(argv)
    by_key = {w.key: w for w in BENCH_WORKLOADS}
    workers = [int(w) for w in args.workers.split(",")]
    stamp = (
        f"# python benchmarks/inorder_model.py {' '.join(sys.argv[1:] if argv is None else argv)}"
        f" -- {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; computed, not measured ({SEEDS} shuffles, {STEPS} steps,"
        f" {args.cpus:g} CPUs)"
    )
    for key in args.workloads:
        bw = by_key.get(key)
        if bw is None or not bw.spec.startswith("sim:"):
            sys.exit(f"inorder_model: {key!r} is not a bench workload of the sim: kind")
        spec = SimSpec.parse(bw.spec.removeprefix("sim:"))
        lines = [stamp, f"# {bw.spec}", *table(key, spec, grid(spec, workers, args.cpus))]
        print("\n".join(lines))
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"{key}.out").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
