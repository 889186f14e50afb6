"""Whether a choice costs issue 48's 2-rank job anything: torchrun_twice.py's job
(tests/frameworks/ddp_train.py, 2 gloo ranks, 2 ms items, 2 epochs of 600 steps a rank) under
plain torchrun with fixed per-rank configurations ($DDP_LOADER), alternated, the order reversed
every other round; each configuration's median wall and its ratio to the first's.
Run from the repository root:
python benchmarks/torchrun_fixed.py ROUNDS CONFIG [CONFIG ...]
where CONFIG is as $DDP_LOADER takes it, e.g.
num_workers=3,prefetch_factor=2,persistent_workers=0"""

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.torchrun_cost import _timed, stamp  # noqa: E402
from benchmarks.torchrun_twice import OUT, _torchrun  # noqa: E402


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: python benchmarks/torchrun_fixed.py ROUNDS CONFIG [CONFIG ...]")
    rounds, configs = int(sys.argv[1]), sys.argv[2:]
    out = [stamp("torchrun_fixed.py", rounds) + " " + " ".join(configs)]
    times: dict[str, list[float]] = {c: [] for c in configs}
    for r in range(rounds):
        for config in round_order(configs, r):
            env = {**os.environ, "DDP_LOADER": config}
            wall, lines = _timed(_torchrun(), env)
            times[config].append(wall)
            out.append(f"round {r + 1} {config}: {wall:.2f}s ({lines[0]})")
    first = statistics.median(times[configs[0]])
    for config, walls in times.items():
        median = statistics.median(walls)
        out.append(
            f"{config}: median {median:.2f}s ({', '.join(f'{t:.2f}' for t in walls)});"
            f" first / this {first / median:.3f}"
        )
    print("\n".join(out))
    (OUT / "torchrun_fixed.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
