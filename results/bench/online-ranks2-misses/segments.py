"""Where a 2-rank online run loses against the ideal: (b) autotune.DataLoader tuning online and (c)
torch's DataLoader on a fixed configuration, trained as 2 DDP ranks exactly as `autotune bench
--online --ranks 2` trains them, in alternating order; each way's steps/s over segments of the
run, from the slowest rank's step stamps.

    python results/bench/online-ranks2-misses/segments.py WORKLOAD ROUNDS 'IDEAL_JSON' >> segments.out
"""

import datetime
import json
import os
import subprocess
import sys

import torch

from autotune.bench import workloads
from autotune.bench.online_ranks import train_ranks
from autotune.bench.online_run import online_options
from autotune.bench.options import OnlineBenchOptions
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus

STEPS = 1500
SEGMENTS = [(0, 40), (40, 200), (200, 700), (700, 1500)]


def rate(stamps, a: int, b: int) -> float:
    return (b - a) / (stamps[b - 1] - (stamps[a - 1] if a else 0.0))


def main() -> None:
    key, rounds, ideal = sys.argv[1], int(sys.argv[2]), LoaderConfig(**json.loads(sys.argv[3]))
    bw = next(w for w in workloads.BENCH_WORKLOADS if w.key == key)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# {' '.join(sys.argv)}\n# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
          f" {commit}, {usable_cpus().count} usable CPUs, {os.uname().nodename}, torch {torch.__version__}")
    online = online_options(OnlineBenchOptions(ranks=2, steps=STEPS), torch.device("cpu"))
    for r in range(rounds):
        for way in ("b", "c") if r % 2 == 0 else ("c", "b"):
            res = train_ranks(bw.spec, "cpu", 2, STEPS, None if way == "b" else ideal, online, {})
            st = res.times.stamps
            segs = "  ".join(f"{a}-{b}: {rate(st, a, b):.1f}" for a, b in SEGMENTS)
            chose = "" if res.state is None else (f"  (explored to step {res.state['exploration_ended_at']},"
                                                  f" chose {res.state['chosen']})")
            print(f"{key} round {r} ({way}) {'online' if way == 'b' else ideal.label():>16}: {st[-1]:.1f} s;"
                  f" steps/s  {segs}{chose}", flush=True)


if __name__ == "__main__":
    main()
