"""Two offline bench runs' rows side by side, before -> now, the columns of bench.md (the worst
of each workload's tunings): python cmp_offline.py OLD_BENCH_JSON NEW_BENCH_JSON."""

import json
import sys
from typing import Any, Callable

HEADER = (
    "| workload | tuned (worst) / grid best | tuned / grid best | recorded vs verified"
    " | tunings differ | longest tuning | of ceiling |\n|---|---|---:|---:|---:|---:|---:|"
)


def _any(v: float) -> bool:
    return True


# Each column: its key in a row, its format, and its target (✗ where missed).
COLUMNS: tuple[tuple[str, str, Callable[[float], bool]], ...] = (
    ("tuned_vs_grid", "{:.3f}", lambda v: v >= 0.97),
    ("recorded_vs_verified", "{:+.1%}", lambda v: abs(v) <= 0.05),
    ("stability_diff", "{:.1%}", lambda v: v <= 0.03),
    ("tune_s", "{:.0f} s", lambda v: v <= 60),
    ("ceiling_share", "{:.0%}", _any),
)


def cell(value: float | None, fmt: str, ok: Callable[[float], bool]) -> str:
    if value is None:
        return "n/a"
    return fmt.format(value) + ("" if ok(value) else " ✗")


def line(new: dict[str, Any], old: dict[str, Any] | None) -> str:
    cells = []
    for key, fmt, ok in COLUMNS:
        now = cell(new.get(key), fmt, ok)
        if old is not None and old.get(key) is not None:
            now = f"{cell(old[key], fmt, ok)} → **{now}**"
        cells.append(now)
    held = " (held out)" if new.get("held_out") else ""
    return f"| {new['key']}{held} | {new['tuned']} / {new['grid_best']} | {' | '.join(cells)} |"


def main() -> None:
    old = {r["key"]: r for r in json.load(open(sys.argv[1]))["rows"]}
    new = json.load(open(sys.argv[2]))["rows"]
    print(HEADER)
    for row in new:
        print(line(row, old.get(row["key"])))


if __name__ == "__main__":
    main()
