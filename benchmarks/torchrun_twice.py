"""Issue 48's 2-rank case: tests/frameworks/ddp_train.py (two gloo ranks on the CPU, items of
2 ms, 2 epochs of 600 steps a rank: the 1,200-step job of issues 45 and 48) run twice under
`autotune run` with one memory folder, each run's report line and each rank's final
configuration; then the same job with fixed per-rank configurations ($DDP_LOADER), each timed
whole like the runs. Rounds repeat all of it with a fresh memory, the fixed configurations'
order rotating; the figure is run 2's time against the best fixed configuration's in the same
round (target: best fixed / run 2 >= 0.98), its median over the rounds. Run from the repository
root: python benchmarks/torchrun_twice.py [ROUNDS]"""

import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.made_by import git_commit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.repeated_runs import under_autotune_run  # noqa: E402
from tests.script_runs import torchrun_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "repeated-runs"
SCRIPT = ROOT / "tests/frameworks/ddp_train.py"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    commit = git_commit()
    out = [
        f"# python benchmarks/torchrun_twice.py {rounds} -- "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit},"
        f" {os.cpu_count()} CPUs, no GPU; load average at the start {os.getloadavg()[0]:.1f};"
        f" {ITEMS} items, {EPOCHS} epochs, 2 ranks, batch 8"
    ]
    ratios: list[float] = []
    for r in range(rounds):
        walls: dict[str, float] = {}
        out.append(f"## round {r + 1}")
        with tempfile.TemporaryDirectory() as memory, tempfile.TemporaryDirectory() as results:
            for run in (1, 2):
                command = under_autotune_run(memory, results, _torchrun())
                t0 = time.perf_counter()
                done = subprocess.run(
                    command, capture_output=True, text=True, cwd=ROOT, timeout=600
                )
                walls[f"autotune run {run}"] = time.perf_counter() - t0
                lines = [
                    line
                    for line in done.stdout.splitlines()
                    if line.startswith(("RANK ", "autotune.DataLoader "))
                ]
                out += [
                    f"run {run} (exit {done.returncode}): {walls[f'autotune run {run}']:.2f}s",
                    *(f"  {line}" for line in sorted(lines)),
                ]
        shift = r % len(FIXED)
        for fixed in FIXED[shift:] + FIXED[:shift]:
            env = {**os.environ, "DDP_LOADER": fixed}
            t0 = time.perf_counter()
            done = subprocess.run(
                _torchrun(), capture_output=True, text=True, cwd=ROOT, env=env, timeout=600
            )
            walls[fixed] = time.perf_counter() - t0
            out.append(f"fixed {fixed} (exit {done.returncode}): {walls[fixed]:.2f}s")
        best = min(FIXED, key=lambda f: walls[f])
        ratios.append(walls[best] / walls["autotune run 2"])
        out.append(
            f"round {r + 1}: best fixed {best} {walls[best]:.2f}s; run 2"
            f" {walls['autotune run 2']:.2f}s: best fixed / run 2 {ratios[-1]:.3f}; run 1"
            f" {walls[best] / walls['autotune run 1']:.3f}"
        )
    out.append(
        f"best fixed / run 2, median of {rounds} rounds: {statistics.median(ratios):.3f}"
        f" ({', '.join(f'{x:.3f}' for x in ratios)}; target >= 0.98); load average at the end"
        f" {os.getloadavg()[0]:.1f}"
    )
    print("\n".join(out))
    (OUT / "torchrun_twice.out").write_text("\n".join(out) + "\n")


ITEMS, EPOCHS = 9600, 2  # 600 steps a rank an epoch
# Fixed per-rank configurations around those the tuned runs chose (w4-w6 in the earlier runs
# here), each as $DDP_LOADER.
FIXED = tuple(
    f"num_workers={w},prefetch_factor={pf},persistent_workers=1"
    for w, pf in ((4, 4), (5, 2), (6, 2), (6, 4), (8, 2))
)


def _torchrun() -> list[str]:
    return torchrun_command(SCRIPT, "torchrun", str(ITEMS), str(EPOCHS))


if __name__ == "__main__":
    main()
