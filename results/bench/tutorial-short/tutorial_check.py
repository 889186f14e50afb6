"""Issue 25's short-run protocol on a real script: tests/frameworks/tutorial_short.py (the shape of
PyTorch's "Data Loading Optimization" tutorial: 512 items of 5 ms, batches of 32, a small CNN on
the CPU, 10 epochs of 16 batches = 160 steps) run four ways, alternating their order by round,
3 rounds, median: the tutorial's baseline loader (no arguments), its hand-tuned one (num_workers=4,
prefetch_factor=2, persistent_workers=True), and the baseline script unmodified under
`autotune run`, with and without `--epochs 10`. The figure is the script's own training time
(from before the first iter() to the last step, printed as SHORT-DONE), and the process's wall
time. Run from the repository root: python results/bench/tutorial-short/tutorial_check.py"""

import datetime
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests/frameworks/tutorial_short.py"
AUTOTUNE = [sys.executable, "-m", "autotune", "run"]
WAYS = {
    "baseline": [sys.executable, str(SCRIPT)],
    "hand-tuned w4 pf2 persist": [sys.executable, str(SCRIPT), "--workers", "4", "--prefetch", "2",
                                  "--persistent"],
    "autotune run --epochs 10": None,
    "autotune run (no length)": None,
}


def command(way: str, results: str) -> list[str]:
    if way == "autotune run --epochs 10":
        return [*AUTOTUNE, "--results-dir", results, "--epochs", "10", "--", sys.executable, str(SCRIPT)]
    if way == "autotune run (no length)":
        return [*AUTOTUNE, "--results-dir", results, "--", sys.executable, str(SCRIPT)]
    return WAYS[way]


def run(way: str) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory() as results:
        t0 = time.perf_counter()
        done = subprocess.run(command(way, results), capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
    line = next(l for l in done.stdout.splitlines() if l.startswith("SHORT-DONE"))
    chosen = next((l.split("autotune.DataLoader chose ", 1)[1].split(":")[0].split(" over")[0]
                   for l in done.stdout.splitlines() if "autotune.DataLoader chose" in l), "")
    return float(line.split()[2]), wall, chosen


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, cwd=ROOT).stdout.strip()
    out = [f"# python results/bench/tutorial-short/tutorial_check.py -- "
           f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}"
           f"{'+dirty' if dirty else ''}, 2 usable CPUs, no GPU"]
    ways = list(WAYS)
    seconds: dict[str, list[float]] = {w: [] for w in ways}
    walls: dict[str, list[float]] = {w: [] for w in ways}
    for r in range(3):
        for way in (ways if r % 2 == 0 else ways[::-1]):
            train_s, wall, chosen = run(way)
            seconds[way].append(train_s)
            walls[way].append(wall)
            line = f"round {r + 1} {way}: training {train_s:.2f}s, process {wall:.2f}s {chosen}"
            print(line, flush=True)
            out.append(line)
    expert = statistics.median(seconds["hand-tuned w4 pf2 persist"])
    for way in ways:
        med = statistics.median(seconds[way])
        line = (f"{way}: median training {med:.2f}s (process {statistics.median(walls[way]):.2f}s);"
                f" hand-tuned / this = {expert / med:.3f}")
        print(line, flush=True)
        out.append(line)
    (Path(__file__).parent / "tutorial_check.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
