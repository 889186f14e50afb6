"""Issue 48's repeated runs: the tutorial-shaped script (tests/frameworks/tutorial_short.py: 512
items of 5 ms, batches of 32, a small CNN on the CPU, 160 steps) run 3 times in a row under
`autotune run` with one memory folder, each run alternated with the tutorial's hand-tuned loader
(num_workers=4, prefetch_factor=2, persistent_workers=True), the order flipped by round, 3 rounds,
a fresh memory each round. Each `autotune run` is paired with the hand-tuned run next to it; the
figure is hand-tuned time / autotune time (the script's own training time, SHORT-DONE). Then a
drifted workload: a run at 5 ms items, then one at 20 ms items (the same dataset, identity and
memory), which should see the remembered best drift and explore again in its first epochs.
Run from the repository root: python benchmarks/repeated_runs.py"""

import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.made_by import git_commit

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "repeated-runs"
SCRIPT = ROOT / "tests/frameworks/tutorial_short.py"
HAND = [sys.executable, str(SCRIPT), "--workers", "4", "--prefetch", "2", "--persistent"]
ROUNDS = 3
RUNS = 3
SLOWER_ITEM_S = "0.020"


def under_autotune_run(memory: str, results: str, command: list[str]) -> list[str]:
    """`command` under `autotune run`, with its results folder and its memory."""
    return [
        sys.executable,
        "-m",
        "autotune",
        "run",
        "--results-dir",
        results,
        "--memory",
        memory,
        "--",
        *command,
    ]


def auto(memory: str, results: str) -> list[str]:
    return under_autotune_run(memory, results, [sys.executable, str(SCRIPT)])


def run(command: list[str], item_s: str | None = None) -> tuple[float, str]:
    """The script's training seconds and autotune's summary line (empty for a plain run)."""
    env = dict(os.environ)
    if item_s is not None:
        env["TUTORIAL_ITEM_S"] = item_s
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    lines = done.stdout.splitlines()
    short = next((line for line in lines if line.startswith("SHORT-DONE")), None)
    if short is None:
        raise SystemExit(f"no SHORT-DONE from {' '.join(command)}:\n{done.stdout}\n{done.stderr}")
    summary = next((line for line in lines if line.startswith("autotune.DataLoader ")), "")
    return float(short.split()[2]), summary


def brief(summary: str) -> str:
    """The choice and what was reused, from the summary line."""
    choice = re.match(
        r"autotune\.DataLoader (chose|had not finished exploring; best so far)"
        r" ([^:]+): ([^ ]+) samples/s",
        summary,
    )
    said = choice.group(2) + f" {choice.group(3)} samples/s" if choice else "?"
    if "exploration incomplete" in summary:
        said += " (exploring unfinished)"
    reused = re.search(r"; (run \d+ of this workload here: .*)$", summary)
    return said + (f"; {reused.group(1)}" if reused else "; first run, nothing remembered")


def main() -> None:
    commit = git_commit()
    out = [
        f"# python benchmarks/repeated_runs.py -- "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit},"
        f" {os.cpu_count()} CPUs, no GPU; load average at the start"
        f" {os.getloadavg()[0]:.1f} (absolute times are noisy: only the pairs compare)"
    ]

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    t0 = time.perf_counter()
    ratios: dict[int, list[float]] = {n: [] for n in range(1, RUNS + 1)}
    for r in range(ROUNDS):
        with tempfile.TemporaryDirectory() as memory, tempfile.TemporaryDirectory() as results:
            for n in range(1, RUNS + 1):
                hand_first = (r + n) % 2 == 0
                if hand_first:
                    hand_s, _ = run(HAND)
                auto_s, summary = run(auto(memory, results))
                if not hand_first:
                    hand_s, _ = run(HAND)
                ratios[n].append(hand_s / auto_s)
                say(
                    f"round {r + 1} run {n}: autotune run {auto_s:.2f}s, hand-tuned {hand_s:.2f}s"
                    f" ({'before' if hand_first else 'after'}), hand/autotune"
                    f" {hand_s / auto_s:.3f}: {brief(summary)}"
                )
    for n, values in ratios.items():
        say(
            f"run {n}: hand-tuned / autotune run, median of {ROUNDS} rounds"
            f" {statistics.median(values):.3f} ({', '.join(f'{v:.3f}' for v in values)});"
            f" target {'>= 0.95' if n == 1 else '>= 0.99'}"
        )

    with tempfile.TemporaryDirectory() as memory, tempfile.TemporaryDirectory() as results:
        before_s, summary = run(auto(memory, results))
        say(f"drift: run 1 at 5 ms items: {before_s:.2f}s: {brief(summary)}")
        hand_s, _ = run(HAND, SLOWER_ITEM_S)
        after_s, summary = run(auto(memory, results), SLOWER_ITEM_S)
        say(
            f"drift: run 2 at {float(SLOWER_ITEM_S) * 1000:.0f} ms items: {after_s:.2f}s"
            f" (hand-tuned {hand_s:.2f}s, hand/autotune {hand_s / after_s:.3f}): {brief(summary)}"
        )
        restarted = re.search(r"in its first (\d+) steps.*exploring started again", summary)
        say(
            "drift: "
            + (
                f"detected; exploring started again at step {restarted.group(1)}"
                f" (epoch {(int(restarted.group(1)) - 1) // 16 + 1} of 16-step epochs)"
                if restarted
                else "NOT detected"
            )
        )
    say(f"total {time.perf_counter() - t0:.0f}s; load average at the end {os.getloadavg()[0]:.1f}")
    (OUT / "repeated_runs.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
