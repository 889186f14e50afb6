"""The simulated short-epochs from w2 pf2 at four run lengths (run.sh), the resume's code (new)
against the code before it (old): python results/bench/online-resume/sim_table.py, from the
repository root; writes sim_table.out beside it."""

import datetime
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from autotune.made_by import git_commit  # noqa: E402

STEPS = (3000, 6000, 12000, 24000)


def row(side: str, steps: int) -> list[str]:
    """The table's row of one run: whole, after tuning, chosen."""
    last = (HERE / f"{side}-{steps}" / "table.out").read_text().splitlines()[-1]
    cells = [c.strip() for c in last.strip("|").split("|")]
    return [cells[1].split(" ")[0], cells[2].split(" ")[0], cells[4]]


def main() -> None:
    lines = [
        f"# python results/bench/online-resume/sim_table.py --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; simulated, not measured (the runs' stamps are in their folders)",
        "",
        "| run of | old (b)/(c) whole | old after tuning | old chose | new (b)/(c) whole |"
        " new after tuning | new chose |",
        "|---:|---:|---:|---|---:|---:|---|",
    ]
    for steps in STEPS:
        old, new = row("old", steps), row("new", steps)
        lines.append(f"| {steps} steps | {' | '.join(old)} | {' | '.join(new)} |")
    text = "\n".join(lines) + "\n"
    (HERE / "sim_table.out").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
