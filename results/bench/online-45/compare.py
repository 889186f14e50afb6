"""The side-by-side table of notes.md: python compare.py FOLDER WORKLOAD,WORKLOAD,... [REPS] reads
FOLDER/{before,after}-WORKLOAD/online.json (run.sh's output) and prints one row a workload. With
REPS (e.g. 1,2,3), FOLDER/{before,after}-WORKLOAD-REP/online.json for each, their rounds pooled:
the worst of every round, then each round in the order run."""

import json
import sys
from pathlib import Path
from typing import Any

HEADER = (
    "| workload | ideal (c) | (b) chose: before / after | whole run, before → after"
    " | after tuning, before → after |\n|---|---|---|---:|---:|"
)


def row_of(root: Path, side: str, workload: str, reps: list[str]) -> dict[str, Any] | None:
    if not reps:
        path = root / f"{side}-{workload}" / "online.json"
        return json.loads(path.read_text())["rows"][0] if path.exists() else None
    found = [row_of(root, side, f"{workload}-{rep}", []) for rep in reps]
    rows = [r for r in found if r is not None]
    if len(rows) < len(reps):
        return None
    pooled = dict(rows[0])
    pooled["rounds"] = [x for r in rows for x in r["rounds"]]
    for key in ("whole", "after"):
        pooled[key] = min(x[key] for x in pooled["rounds"])
    return pooled


def rounds(row: dict[str, Any], key: str) -> str:
    return ", ".join(f"{r[key]:.3f}" for r in row["rounds"])


def chosen(row: dict[str, Any]) -> str:
    return ", ".join(dict.fromkeys(r["chosen"] for r in row["rounds"]))


def figure(before: dict[str, Any], after: dict[str, Any], key: str) -> str:
    return (
        f"{before[key]:.3f} ({rounds(before, key)}) → **{after[key]:.3f}** ({rounds(after, key)})"
    )


def main() -> None:
    root, workloads = Path(sys.argv[1]), sys.argv[2].split(",")
    reps = sys.argv[3].split(",") if len(sys.argv) > 3 else []
    print(HEADER)
    for workload in workloads:
        before = row_of(root, "before", workload, reps)
        after = row_of(root, "after", workload, reps)
        if before is None or after is None:
            continue
        ideal = (
            before["ideal"]
            if before["ideal"] == after["ideal"]
            else (f"{before['ideal']} / {after['ideal']}")
        )
        print(
            f"| {workload} | {ideal} | {chosen(before)} / {chosen(after)}"
            f" | {figure(before, after, 'whole')} | {figure(before, after, 'after')} |"
        )


if __name__ == "__main__":
    main()
