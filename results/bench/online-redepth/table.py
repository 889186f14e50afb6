"""heavy-tail and deep-storage, new (2120bb2: the prefetch depth taken in place) against old
(52f406c, whose autotune is 4af3a8c's), 3 rounds each (run.sh): per run (b)/(c) per round, over
the whole run and after tuning, (b)'s exploring steps and cost, its choices, and how many of its
windows' configurations differ from another in prefetch_factor alone (the switches now made in
place). python results/bench/online-redepth/table.py, from the repository root."""

import datetime
import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from autotune.made_by import git_commit  # noqa: E402

RUNS = ("new-heavy-tail", "old-heavy-tail", "new-deep-storage", "old-deep-storage")


def depth_pairs(labels: list[str]) -> int:
    """Pairs of configurations measured that differ in prefetch_factor alone."""
    bare = [re.sub(r" pf\d+", "", label) for label in labels if not label.startswith("w0")]
    return sum(bare[i] == bare[j] for i in range(len(bare)) for j in range(i))


def cell(values: list) -> str:
    return ", ".join("n/a" if v is None else f"{v:.3f}" for v in values)


def main() -> None:
    print(
        "# python results/bench/online-redepth/table.py --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; the runs' own commits and dates are in each online.json\n"
    )
    print(
        "| run | commit | ideal (c) | (b)/(c) whole | (b)/(c) after | exploring steps |"
        " exploring cost, s | depth-only pairs | (b) chose |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in RUNS:
        path = HERE / name / "online.json"
        if not path.is_file():
            print(f"| {name} | not run | | | | | | | |")
            continue
        report = json.loads(path.read_text())
        row = report["rows"][0]
        rounds = row["rounds"]
        costs = [r["exploration_cost_s"] for r in rounds]
        print(
            f"| {name} | {report['commit']} | {row['ideal']} |"
            f" {cell([r['whole'] for r in rounds])} (median"
            f" {statistics.median(r['whole'] for r in rounds):.3f}) |"
            f" {cell([r['after'] for r in rounds])} |"
            f" {', '.join(str(r['exploration_steps']) for r in rounds)} |"
            f" {', '.join(f'{cost or 0:.2f}' for cost in costs)} |"
            f" {', '.join(str(depth_pairs(list(r['windows']))) for r in rounds)} |"
            f" {', '.join(str(r['chosen']) for r in rounds)} |"
        )


if __name__ == "__main__":
    main()
