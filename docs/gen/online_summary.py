"""The online page's first table: per bench workload, its newest figure of at least three rounds,
from whichever committed run holds it (a historical record, such as an experiment's run of a policy
that was not kept, is left out)."""

from __future__ import annotations

import subprocess
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Callable

from sources import ROOT, Source, read

from benchmarks.cells import table
from benchmarks.online_model import OnlineReport, OnlineRow
from benchmarks.render_online import ratios
from benchmarks.targets import MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE

# The online policy's changes of behaviour, oldest first, each with the bench workloads it reaches.
# A row measured before a change that reaches its workload ran the policy before, and is marked
# so. cb264e9: a window at num_workers=0 is 3 steps, not 8; it does not reach in-memory (3.7 ms
# steps at w0: window_s sets the window, 27 steps, before and after) or short-run (told its 160
# steps: its windows were 1 step already), as online-start's notes say. 8b33bab: a pool's windows
# are whole epochs where epochs are short (at the defaults, 50 steps or fewer with no told length
# below 600 steps): tiny-epochs' 30-step epochs among the bench workloads.
# Later changes reach every workload: b2a5434, a configuration's RAM is read before its first
# window (it read the second one low); b55f0c7, a piece below 0.3 of its configuration's median is
# a stall, counted nowhere; 3d40e07, a pool's first window_s of steps is warm-up; b4643da, a start
# still the best when the climb ends, measured in its one window, is measured again.
POLICY_CHANGES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("cb264e9", lambda key: key not in ("in-memory", "short-run")),
    ("8b33bab", lambda key: key == "tiny-epochs"),
    ("b2a5434", lambda key: True),
    ("b55f0c7", lambda key: True),
    ("3d40e07", lambda key: True),
    ("b4643da", lambda key: True),
)


@cache  # one git call per commit and change: the rows of one run share their commit
def _has(commit: str, change: str) -> int:
    base = commit.split()[0].split("+")[0]
    return subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "--is-ancestor", change, base],
        capture_output=True,
        text=True,
    ).returncode


def policy(commit: str, key: str) -> str:
    """Whether a run's commit has the current online policy for workload `key`: "current",
    "before `<change>`" (the newest change it lacks), or "n/a" where git cannot tell."""
    for change, reaches in reversed(POLICY_CHANGES):
        if not reaches(key):
            continue
        has = _has(commit, change)
        if has != 0:
            return f"before `{change}`" if has == 1 else "n/a"
    return "current"


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
        lines.append(
            f"| {key} | {ratios(row.whole, [], row.targets.get('online_whole'))} |"
            f" {ratios(row.after, [], row.targets.get('online_after'))} | {row.ideal} |"
            f" {chosen} |"
            f" {source.date[:10]}, `{source.commit.split()[0]}` | {policy(source.commit, key)} |"
            f" [`{Path(source.path).parent.name}`]({source.link()}) |"
        )
    met = sum(
        r.targets.get("online_whole") is True and r.targets.get("online_after") is True
        for r, _ in rows.values()
    )
    head = (
        "| workload | whole run (worst) | after tuning (worst) | ideal (c) | (b) chose |"
        " measured, commit | policy | file |"
    )
    return [
        f"Each workload's newest run of three rounds or more, worst round (targets: whole run"
        f" ≥ {MIN_ONLINE_WHOLE}, after tuning ≥ {MIN_ONLINE_AFTER}). Both targets met on {met} of"
        f" {len(rows)} workloads. Each run's own section below has its notes: every miss's"
        " numbers and cause. *policy*: whether the run had the current online policy, as far as"
        " it reaches that workload. Its changes: `cb264e9`, a window at `num_workers=0` is 3"
        " steps, not 8, and at least `window_s` (it does not reach in-memory, whose steps at"
        " `num_workers=0` are shorter than `window_s` / 8, or short-run, told it is shorter than"
        " 400 steps); `8b33bab`, a pool's windows are whole epochs where epochs are short (50"
        " steps or fewer at the defaults: tiny-epochs here); and, reaching every workload,"
        " `b2a5434`, a configuration's RAM is read before its first window; `b55f0c7`, a window"
        " below 0.3 of its configuration's median (a pause) counts nowhere; `3d40e07`, a pool's"
        " first `window_s` of steps is warm-up; `b4643da`, a start still the best when the climb"
        " ends, measured in its one window, is measured again.",
        "",
        table(head, "|---|---:|---:|---|---|---|---|---|", lines),
        "",
    ]
