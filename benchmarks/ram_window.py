"""Whether the cost order's RAM reading (online/pool_memory.py) lowers the window it runs beside:
issue 48's 2-rank job (tests/frameworks/ddp_train.py under `autotune run`, a fresh memory each
run) on two codes alternated, the current tree and one given as a folder (a clone of an older
commit). Each run's memory entry keeps every configuration's windows (batches/s, in order); for
each configuration measured in three windows or more, its second window over the mean of the
others. Where the reading runs beside the second window (the older code read it on a thread
started at the first window's end), that ratio sits below 1; where no window runs beside it, near
1. Also each run's wall time, its choice and its exploring cost.

Run from the repository root:
    python benchmarks/ram_window.py OLD_TREE [ROUNDS]
e.g. OLD_TREE a `git clone` of the repository checked out at the older commit."""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.made_by import git_commit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.repeated_runs import under_autotune_run  # noqa: E402
from benchmarks.torchrun_twice import OUT, ROOT, _torchrun  # noqa: E402


def main() -> None:
    old = Path(sys.argv[1]).resolve()
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    codes = {
        "new": (ROOT, git_commit()),
        "old": (old, git_commit(old)),
    }
    out = [
        f"# python benchmarks/ram_window.py {sys.argv[1]} {rounds} -- "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; new: this tree"
        f" ({codes['new'][1]}), old: {codes['old'][1]}; {os.cpu_count()} CPUs, no GPU; load"
        f" average at the start {os.getloadavg()[0]:.1f}"
    ]
    ratios: dict[str, list[float]] = {"new": [], "old": []}
    walls: dict[str, list[float]] = {"new": [], "old": []}
    for r in range(rounds):
        for code in round_order(("new", "old"), r):
            tree = codes[code][0]
            first = len(out)
            with tempfile.TemporaryDirectory() as name:
                tmp = Path(name)
                env = {**os.environ, "PYTHONPATH": str(tree)}
                command = under_autotune_run(str(tmp / "memory"), str(tmp / "results"), _torchrun())
                t0 = time.perf_counter()
                done = subprocess.run(
                    command, capture_output=True, text=True, cwd=tree, env=env, timeout=600
                )
                wall = time.perf_counter() - t0
                walls[code].append(wall)
                line = next(
                    (x for x in done.stdout.splitlines() if x.startswith("autotune.DataLoader")),
                    f"(no report line; exit {done.returncode})",
                )
                out.append(f"round {r + 1} {code}: {wall:.2f}s; {line}")
                for entry in map(json.loads, map(Path.read_text, (tmp / "memory").glob("*.json"))):
                    for windows in entry["measured"]:
                        rates = [8 * x for x in windows["rates"]]  # batch 8: samples/s
                        c = windows["config"]
                        label = (
                            f"w{c['num_workers']} pf{c['prefetch_factor']}"
                            f"{' persist' if c['persistent_workers'] else ''}"
                        )
                        if len(rates) >= 3 and c["num_workers"] > 0:
                            rest = statistics.fmean(rates[:1] + rates[2:])
                            ratios[code].append(rates[1] / rest)
                            note = f"second / the others {rates[1] / rest:.3f}"
                        else:
                            note = "fewer than 3 windows" if c["num_workers"] else "no workers"
                        shown = ", ".join(f"{x:.0f}" for x in rates)
                        out.append(f"  {label}: {shown} samples/s ({note})")
            print("\n".join(out[first:]), flush=True)
    for code in ("new", "old"):
        v = ratios[code]
        below = sum(x < 1 for x in v)
        out.append(
            f"{code} ({codes[code][1]}): second window / the others, median"
            f" {statistics.median(v):.3f} over {len(v)} configurations ({below} below 1;"
            f" {min(v):.3f} to {max(v):.3f}); run wall median {statistics.median(walls[code]):.2f}s"
        )
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out[-3:]))
    (OUT / "ram_window.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
