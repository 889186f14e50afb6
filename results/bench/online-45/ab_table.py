"""Two codes side by side (ab.sh's output): each ab-<commit>/table.py calls `main` with its folder
and the two commits. Reads old/WORKLOAD/ and new/WORKLOAD/online.json (each workload run on both
codes, one after the other). Per code: the worst round's whole-run and after-tuning ratios to the
grid's best (every round in brackets), the exploring steps and cost (median of the rounds), and
the choices."""

import datetime
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT)]
from autotune.made_by import git_commit  # noqa: E402


def worst(rounds: list[dict], key: str) -> str:
    return f"{min(r[key] for r in rounds):.3f} ({', '.join(f'{r[key]:.3f}' for r in rounds)})"


def cells(path: Path) -> list[str]:
    rounds = json.loads(path.read_text())["rows"][0]["rounds"]
    steps = statistics.median(r["exploration_steps"] for r in rounds)
    cost = statistics.median(r["exploration_cost_s"] for r in rounds)
    chosen = ", ".join(dict.fromkeys(r["chosen"] or "n/a" for r in rounds))
    return [worst(rounds, "whole"), worst(rounds, "after"), f"{steps:.0f} / {cost:.2f} s", chosen]


def main(here: Path, old_code: str, new_code: str) -> None:
    """The table of `here` (an ab-<commit>/ folder): `old_code` and `new_code` name the two."""
    print(
        f"# python {here.relative_to(ROOT)}/table.py --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; the runs' own commits and dates are in each online.json\n"
    )
    print(
        "| workload | code | whole run, worst (rounds) | after tuning, worst (rounds) |"
        " exploring steps / cost, median | chose |"
    )
    print("|---|---|---:|---:|---:|---|")
    for new in sorted(here.glob("new/*/online.json")):
        old = here / "old" / new.parent.name / "online.json"
        for code, path in ((old_code, old), (new_code, new)):
            if path.exists():
                print(f"| {new.parent.name} | {code} | " + " | ".join(cells(path)) + " |")
