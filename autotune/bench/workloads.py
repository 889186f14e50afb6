"""The bench's workloads: each puts the best configuration somewhere else.

On a machine with C usable CPUs (and a step that leaves the CPU free, like a GPU kernel):
  cpu-heavy         items burn CPU: the best is about one worker per free core, no more;
  storage           items wait on storage latency: the best is well above the core count;
  slow-accelerator  the step is slow: any worker keeps up, so the best is the cheapest (1 worker);
  large-items       768 KiB items: moving batches between processes is the cost that matters;
  demo              the real JPEG decode + augment pipeline training a small CNN on the CPU;
  held-out          mid-sized image items with a little storage latency and a moderate step;
                    not run while the tuner was developed.

Each full run holds one workload out; once run, it is seen, and a fresh one replaces it. The seen
ones stay available with `--workloads` (off by default, to keep the full run under 30 minutes):
  mixed             CPU and storage cost mixed (held out in the first full run);
  cpu-storage-slow  CPU work with a little storage latency and a slow step (held out in the
                    second);
  big-batches       large batches of mid-sized items, CPU and storage latency alike (held out in
                    the third: it showed the host-CPU-ceiling stop rule, since removed, stopping
                    short of the best).
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.errors import OptionsError


@dataclass(frozen=True)
class BenchWorkload:
    key: str
    spec: str  # as `autotune tune` takes it
    what: str  # where its best lies, and why
    held_out: bool = False
    compute_bound: bool = False  # the step is the bottleneck: the tuner must stay cheap
    quick: bool = False  # part of `autotune bench --quick`
    default: bool = True  # part of the full run (the others only when named with --workloads)
    # Boolean knobs the grid holds off (the tuner still searches them), where the full grid
    # would cost too much. persistent_workers only acts at an epoch boundary, and the demo's
    # epoch (800 batches) is far longer than any burst: measuring it on would repeat each point.
    grid_off: tuple[str, ...] = ()


BENCH_WORKLOADS = (
    BenchWorkload("cpu-heavy", "sim:cpu_ms=4,step_ms=10,batch=16",
                  "4 ms of CPU per item: loading is CPU-bound"),
    BenchWorkload("storage", "sim:cpu_ms=0.2,io_ms=5,step_ms=20,batch=16",
                  "5 ms storage latency per item: workers wait, more than the cores pay off",
                  quick=True),
    BenchWorkload("slow-accelerator", "sim:cpu_ms=1,step_ms=80,batch=16",
                  "80 ms step: one worker keeps up", compute_bound=True, quick=True),
    BenchWorkload("large-items", "sim:cpu_ms=0.5,step_ms=10,batch=16,shape=3x256x256",
                  "768 KiB items: inter-process copies dominate"),
    BenchWorkload("demo", "demo", "JPEG decode and augmentation, a small CNN trained on the CPU",
                  grid_off=("persistent_workers",)),
    BenchWorkload("held-out", "sim:cpu_ms=1.2,io_ms=0.5,step_ms=30,batch=32,shape=3x128x128",
                  "mid-sized image items, a little storage latency, a moderate step; never run"
                  " while developing", held_out=True),
    BenchWorkload("mixed", "sim:cpu_ms=1.5,io_ms=3,step_ms=25,batch=32",
                  "CPU and storage cost mixed; held out in the first full run", default=False),
    BenchWorkload("cpu-storage-slow", "sim:cpu_ms=2.5,io_ms=1,step_ms=40,batch=16",
                  "CPU work, a little storage latency, a slow step; held out in the second full run",
                  default=False),
    BenchWorkload("big-batches", "sim:cpu_ms=0.8,io_ms=2,step_ms=15,batch=64,shape=3x64x64",
                  "large batches of mid-sized items, CPU and storage latency alike; held out in"
                  " the third full run", default=False),
)


def check_keys(keys: list[str]) -> list[str]:
    known = [w.key for w in BENCH_WORKLOADS]
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise OptionsError(f"unknown bench workload {', '.join(unknown)}; choose from"
                           f" {', '.join(known)}")
    return keys


def select(keys: list[str] | None, quick: bool) -> list[BenchWorkload]:
    if keys:
        check_keys(keys)
        return [w for k in keys for w in BENCH_WORKLOADS if w.key == k]
    return [w for w in BENCH_WORKLOADS if (w.quick if quick else w.default)]
