"""The online page's first table: per bench workload, its newest figure of at least three rounds,
from whichever committed run holds it (a historical record, such as an experiment's run of a policy
that was not kept, is left out)."""

from __future__ import annotations

import subprocess
from datetime import datetime
from functools import cache
from pathlib import Path

from sources import ROOT, Source, read

from autotune.bench.cells import table
from autotune.bench.online_model import OnlineReport, OnlineRow
from autotune.bench.render_online import ratios
from autotune.bench.targets import MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE


# The online policy's last change of behaviour (a window at num_workers=0 is 3 steps): a row
# measured before it ran the policy before, and is marked so.
POLICY_SINCE = "cb264e9"


@cache  # one git call per commit: the rows of one run share it
def policy(commit: str) -> str:
    """Whether a run's commit has the current online policy: "current", "before `POLICY_SINCE`",
    or "n/a" where git cannot tell (no history, an unknown commit)."""
    base = commit.split()[0].split("+")[0]
    out = subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", POLICY_SINCE, base],
                         capture_output=True, text=True)
    return {0: "current", 1: f"before `{POLICY_SINCE}`"}.get(out.returncode, "n/a")


def newest_rows(files: tuple[str, ...]) -> dict[str, tuple[OnlineRow, Source]]:
    """Each workload's row from the newest single-rank, full-length run of 3+ rounds."""
    newest: dict[str, tuple[OnlineRow, Source, datetime]] = {}
    for rel in files:
        path = ROOT / rel
        if not path.exists():
            continue
        source, data = read(path)
        report = OnlineReport.model_validate(data)
        if report.historical or report.ranks != 1 or report.rounds < 3 or report.below_minimum:
            continue
        for row in report.rows:
            if row.key not in newest or report.created > newest[row.key][2]:
                newest[row.key] = (row, source, report.created)
    return {key: (row, source) for key, (row, source, _) in sorted(newest.items())}


def summary(files: tuple[str, ...]) -> list[str]:
    rows = newest_rows(files)
    lines = []
    for key, (row, source) in rows.items():
        chosen = ", ".join(dict.fromkeys(r.chosen or "n/a" for r in row.rounds))
        # The worst round's figures, marked by the row's own targets (the bench judged them).
        lines.append(f"| {key} | {ratios(row.whole, [], row.targets.get('online_whole'))} |"
                     f" {ratios(row.after, [], row.targets.get('online_after'))} | {row.ideal} |"
                     f" {chosen} |"
                     f" {source.date[:10]}, `{source.commit.split()[0]}` | {policy(source.commit)} |"
                     f" [`{Path(source.path).parent.name}`](../benchmarks/{source.download}) |")
    met = sum(r.targets.get("online_whole") is True and r.targets.get("online_after") is True
              for r, _ in rows.values())
    head = ("| workload | whole run (worst) | after tuning (worst) | ideal (c) | (b) chose |"
            " measured, commit | policy | file |")
    return [f"Each workload's newest run of three rounds or more, worst round (targets: whole run"
            f" ≥ {MIN_ONLINE_WHOLE}, after tuning ≥ {MIN_ONLINE_AFTER}). Both targets met on {met} of"
            f" {len(rows)} workloads. Each run's own section below has its notes: every miss's"
            " numbers and cause. *policy*: whether the run had the current online policy (its last"
            f" change, `{POLICY_SINCE}`: a window at `num_workers=0` is 3 steps, not 8, and at least"
            " `window_s`). That change does not reach a workload whose steps at `num_workers=0` are"
            " shorter than `window_s` / 8 (then `window_s` sets the window, as before), or a run the"
            " tuner is told is shorter than 400 steps (its windows were 1% of the run already).", "",
            table(head, "|---|---:|---:|---|---|---|---|---|", lines), ""]
