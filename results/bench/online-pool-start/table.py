"""A run that starts with workers: new (d1ce454: the starved start pool predicts the worker count)
against old (8a204aa's autotune), 3 rounds each (run.sh), and steady (366e3d8: the prediction
over the pool's steady steps) where it was run, (b) started from the script's own configuration
(--start): per run (b)/(c) per round, over the whole run and after tuning, (b)'s
exploring steps and cost, and its choices. python results/bench/online-pool-start/table.py
[FOLDER], from the repository root: FOLDER (default: this one) holds one `bench --online --out`
folder per run, named WAY-REST (WAY new, steady or old), read in that order for each REST."""

import datetime
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from autotune.made_by import git_commit  # noqa: E402

WAYS = ("new", "steady", "old")


def cell(values: list) -> str:
    return ", ".join("n/a" if v is None else f"{v:.3f}" for v in values)


def runs(folder: Path) -> list[Path]:
    """The folder's runs, each way of one workload and start together, new first."""
    found = [d for d in folder.iterdir() if (d / "online.json").is_file()]

    def key(d: Path) -> tuple[str, int]:
        way, _, rest = d.name.partition("-")
        return rest, WAYS.index(way) if way in WAYS else len(WAYS)

    return sorted(found, key=key)


def main() -> None:
    folder = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE
    shown = " " + str(folder.relative_to(HERE.parents[2])) if folder != HERE else ""
    print(
        f"# python results/bench/online-pool-start/table.py{shown} --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; the runs' own commits and dates are in each online.json\n"
    )
    print(
        "| run | (b) from | ideal (c) | (b)/(c) whole | (b)/(c) after | exploring steps |"
        " exploring cost, s | (b) chose |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for run in runs(folder):
        report = json.loads((run / "online.json").read_text())
        row = report["rows"][0]
        rounds = row["rounds"]
        costs = [r["exploration_cost_s"] or 0 for r in rounds]
        print(
            f"| {run.name} | {report.get('start', 'w0')} | {row['ideal']} |"
            f" {cell([r['whole'] for r in rounds])} (median"
            f" {statistics.median(r['whole'] for r in rounds):.3f}) |"
            f" {cell([r['after'] for r in rounds])} |"
            f" {', '.join(str(r['exploration_steps']) for r in rounds)} |"
            f" {', '.join(f'{cost:.2f}' for cost in costs)} |"
            f" {', '.join(str(r['chosen']) for r in rounds)} |"
        )


if __name__ == "__main__":
    main()
