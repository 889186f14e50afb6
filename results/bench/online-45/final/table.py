"""The final code's online bench against each workload's newest earlier figure: python
results/bench/online-45/final/table.py, from the repository root. Reads final/WORKLOAD/online.json
(run.sh's output), the same script's run of c83c13d where it ran (../final-c83c13d, stopped when
1358da7 was found), and for the earlier figure the newest run of 3 rounds or more among the runs
the docs' online page reads (docs/gen/results_pages.py), these two folders left out."""

import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "gen")]
from online_summary import newest_rows  # noqa: E402
from results_pages import ONLINE, ONLINE_45  # noqa: E402

from autotune.made_by import git_commit  # noqa: E402

HERE = Path(__file__).resolve().parent


def worst(row: dict, key: str) -> str:
    figures = ", ".join(f"{r[key]:.3f}" for r in row["rounds"])
    return f"{min(r[key] for r in row['rounds']):.3f} ({figures})"


def main() -> None:
    final_files = sorted(HERE.glob("*/online.json"))
    print(
        f"# python results/bench/online-45/final/table.py --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; the runs' own commits and dates are in each online.json\n"
    )
    earlier = newest_rows(tuple(f for f in ONLINE + ONLINE_45 if "/final" not in f))
    print(
        "| workload | ideal (c) | (b) chose | whole run, worst (rounds) | after tuning, worst"
        " (rounds) | targets met | c83c13d: whole / after | earlier: whole / after (commit,"
        " date) |"
    )
    print("|---|---|---|---:|---:|---|---|---|")
    met = 0
    for path in final_files:
        report = json.loads(path.read_text())
        for row in report["rows"]:
            ok = (
                row["targets"].get("online_whole") is True
                and row["targets"].get("online_after") is True
            )
            met += ok
            before = earlier.get(row["key"])
            was = (
                "n/a"
                if before is None
                else f"{before[0].whole:.3f} / {before[0].after:.3f}"
                f" (`{before[1].commit.split()[0]}`, {before[1].date[:10]})"
            )
            old = HERE.parent / "final-c83c13d" / row["key"] / "online.json"
            c83 = (
                "n/a"
                if not old.exists()
                else " / ".join(
                    f"{min(r[k] for r in json.loads(old.read_text())['rows'][0]['rounds']):.3f}"
                    for k in ("whole", "after")
                )
            )
            chosen = ", ".join(dict.fromkeys(r["chosen"] or "n/a" for r in row["rounds"]))
            print(
                f"| {row['key']} | {row['ideal']} | {chosen} | {worst(row, 'whole')} |"
                f" {worst(row, 'after')} | {'both' if ok else 'no'} | {c83} | {was} |"
            )
    print(f"\nboth targets met on {met} of {len(final_files)} workloads")


if __name__ == "__main__":
    main()
