"""Where epochs are short, a persistent pool at prefetch_factor=1 against 2, the rest alike.

The online climb measures a short epoch's pool over whole epochs and, where the run's length is
unknown, can often afford one pool beside its start: the jump's (decision/prefetch.py). This runs
the plain training loop (autotune.verify.steady: a settle, then a window of whole epochs with
their refills) on the bench's two short-epoch workloads at the worker counts the climb jumps to
and the grid's best, each at both depths, alternated by round, and prints each pair's ratio.

Run from the repository root:
    python benchmarks/prefetch_depth.py [ROUNDS] [SECONDS]
Writes results/bench/prefetch-short-epochs/prefetch_depth.out."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.space.config import LoaderConfig  # noqa: E402
from autotune.verify.steady import measure_steady  # noqa: E402
from autotune.workload.spec import load_workload  # noqa: E402
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.torchrun_cost import stamp  # noqa: E402
from benchmarks.workloads import BENCH_WORKLOADS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "prefetch-short-epochs" / "prefetch_depth.out"
# Workload: the worker counts compared (the online climb's jump on it, and the grid's best).
WORKERS = {"tiny-epochs": (4, 6), "open-30": (14, 16)}
DEPTHS = (2, 1)
SETTLE_S = 1.0


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    out = [stamp("prefetch_depth.py", rounds, seconds)]
    specs = {w.key: w.spec for w in BENCH_WORKLOADS}
    for key, counts in WORKERS.items():
        workload = load_workload(specs[key])
        configs = [
            LoaderConfig(num_workers=n, prefetch_factor=pf, persistent_workers=True)
            for n in counts
            for pf in DEPTHS
        ]
        rates: dict[LoaderConfig, list[float]] = {c: [] for c in configs}
        for r in range(rounds):
            for config in round_order(configs, r):
                result = measure_steady(workload, config, "cpu", seconds, settle_s=SETTLE_S)
                rates[config].append(result.samples_per_s)
                rate = result.samples_per_s
                print(f"{key} round {r + 1} {config.label()}: {rate:.1f}", flush=True)
        out.append(f"{key} ({specs[key]}), samples/s over whole epochs, {rounds} rounds:")
        for n in counts:
            deep, shallow = (rates[c] for c in configs if c.num_workers == n)
            wins = sum(s > d for s, d in zip(shallow, deep, strict=True))
            out.append(
                f"  w{n} persist: pf2 median {statistics.median(deep):.1f}"
                f" ({', '.join(f'{x:.0f}' for x in deep)}), pf1 median"
                f" {statistics.median(shallow):.1f} ({', '.join(f'{x:.0f}' for x in shallow)});"
                f" pf1 / pf2 {statistics.median(shallow) / statistics.median(deep):.3f},"
                f" pf1 faster in {wins} of {rounds} rounds"
            )
    text = "\n".join(out) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
