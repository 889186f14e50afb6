"""Where a fast pipeline's periodic pauses come from, and which configurations pay them.

The online climb's 0.1 s windows on in-memory sometimes read one window of a configuration far
below its others (results/bench/online-45/notes.md). This runs the plain loop on one loader per
configuration, alternated by round, in one process, and prints for each: its rate, its median
step, the steps slower than PAUSE_X times that median (the pauses: how many and how long), and
the full (generation 2) garbage collections of the main process with their time (gc.callbacks).
One variant freezes the garbage collector in each worker at its start (`gc.freeze()` in
worker_init_fn): what a pause left then is not a worker's collection.

Run from the repository root:
    python benchmarks/gc_pauses.py [SPEC] [STEPS] [ROUNDS]
Writes results/bench/gc-pauses/<SPEC's kind>.out."""

from __future__ import annotations

import datetime
import gc
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.made_by import git_commit  # noqa: E402
from autotune.space.config import LoaderConfig  # noqa: E402
from autotune.workload.base import Workload  # noqa: E402
from autotune.workload.spec import WorkloadOptions, load_workload  # noqa: E402
from benchmarks.alternate import round_order  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "gc-pauses"
IN_MEMORY = "mem:step_ms=2,batch=256,shape=32,length=262144"  # the bench's in-memory workload
PAUSE_X = 10  # a step this many times the median step is a pause
WARM_STEPS = 20  # a loader's first steps (its pool's start, its buffer) are not measured
FROZEN = "frozen"  # the variant that freezes the collector in each worker


def freeze_in_worker(worker_id: int) -> None:
    """worker_init_fn: the objects a worker inherited are never collected in it."""
    gc.freeze()


class Collections:
    """The main process's full collections while installed: their count and seconds."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._start: float | None = None

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._start = time.perf_counter()
        elif self._start is not None:
            self.count += 1
            self.seconds += time.perf_counter() - self._start
            self._start = None


def run(workload: Workload, config: LoaderConfig, frozen: bool, steps: int) -> dict[str, Any]:
    """`steps` steps of the plain loop after WARM_STEPS, on a fresh loader of `config`."""
    arguments = {**workload.loader_arguments(), **config.dataloader_kwargs()}
    if frozen:
        arguments["worker_init_fn"] = freeze_in_worker
    loader = torch.utils.data.DataLoader(**arguments)
    it = iter(loader)
    for _ in range(WARM_STEPS):
        workload.step(next(it))
    collections = Collections()
    gc.callbacks.append(collections)
    times = []
    try:
        t = time.perf_counter()
        for _ in range(steps):
            workload.step(next(it))
            now = time.perf_counter()
            times.append(now - t)
            t = now
    finally:
        gc.callbacks.remove(collections)
    del it, loader
    median = statistics.median(times)
    pauses = [s for s in times if s > PAUSE_X * median]
    return dict(
        rate=steps / sum(times),
        median_ms=1000 * median,
        pauses=len(pauses),
        pause_ms=[round(1000 * s) for s in pauses],
        gen2=collections.count,
        gen2_ms=1000 * collections.seconds,
        seconds=sum(times),
    )


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else IN_MEMORY
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 950
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    workload = load_workload(spec, WorkloadOptions(device="cpu"))
    torch.set_num_threads(1)
    # torch warns of 4 workers on 2 CPUs at every loader: the grid's points have them too.
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    variants: list[tuple[LoaderConfig, bool]] = [
        (LoaderConfig(num_workers=0), False),
        (LoaderConfig(num_workers=1, prefetch_factor=2, persistent_workers=True), False),
        (LoaderConfig(num_workers=1, prefetch_factor=2, persistent_workers=True), True),
        (LoaderConfig(num_workers=4, prefetch_factor=2, persistent_workers=True), False),
        (LoaderConfig(num_workers=4, prefetch_factor=8, persistent_workers=True), False),
    ]
    lines = [
        f"# python benchmarks/gc_pauses.py {spec} {steps} {rounds} -- commit {git_commit()},"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC,"
        f" {os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.1f};"
        f" objects tracked by the collector in the main process: {len(gc.get_objects())}"
    ]
    seen: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        order = round_order(variants, r)
        for config, frozen in order:
            label = config.label() + (f" {FROZEN}" if frozen else "")
            got = run(workload, config, frozen, steps)
            seen.setdefault(label, []).append(got)
            lines.append(
                f"round {r + 1} {label:24s} {got['rate']:7.1f} batches/s, median step"
                f" {got['median_ms']:.2f} ms, pauses (> {PAUSE_X}x) {got['pauses']}"
                f" {got['pause_ms']} ms, main-process full collections {got['gen2']}"
                f" ({got['gen2_ms']:.0f} ms) in {got['seconds']:.2f} s"
            )
    lines.append("per configuration, all rounds:")
    for label, runs in seen.items():
        seconds = sum(x["seconds"] for x in runs)
        paused = sum(sum(x["pause_ms"]) for x in runs) / 1000
        lines.append(
            f"  {label:24s} median {statistics.median(x['rate'] for x in runs):7.1f} batches/s;"
            f" {sum(x['pauses'] for x in runs)} pauses in {seconds:.1f} s, {paused:.2f} s of it"
            f" ({100 * paused / seconds:.1f}%); main-process full collections"
            f" {sum(x['gen2'] for x in runs)}"
        )
    print("\n".join(lines))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{spec.split(':')[0]}.out").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
