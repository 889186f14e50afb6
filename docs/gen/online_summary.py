"""The online page's first table: per bench workload, its newest figure of at least three rounds,
from whichever committed run holds it (a historical record, such as an experiment's run of a policy
that was not kept, is left out)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Callable

from sources import ROOT, Source, read

from benchmarks.cells import table
from benchmarks.online_model import OnlineReport, OnlineRow
from benchmarks.render_online import ratios
from benchmarks.targets import MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE


@dataclass(frozen=True)
class PolicyChange:
    """A change of the online policy's behaviour: a row measured on a commit without it ran the
    policy before, where the change reaches the row's workload."""

    commit: str
    what: str  # what it changed, for the page
    reaches: Callable[[str], bool]  # the bench workload keys it changes
    where: str = ""  # which workloads, where not all


# Oldest first.
POLICY_CHANGES: tuple[PolicyChange, ...] = (
    PolicyChange(
        "cb264e9",
        "a window at `num_workers=0` is 3 steps, not 8, and at least `window_s`",
        lambda key: key not in ("in-memory", "short-run"),
        "not in-memory, whose steps at `num_workers=0` are shorter than `window_s` / 8, nor"
        " short-run, told it is shorter than 400 steps",
    ),
    PolicyChange(
        "8b33bab",
        "a pool's windows are whole epochs where epochs are short, 50 steps or fewer at the"
        " defaults",
        lambda key: key == "tiny-epochs",
        "tiny-epochs only",
    ),
    PolicyChange(
        "b2a5434", "a configuration's RAM is read before its first window", lambda key: True
    ),
    PolicyChange(
        "b55f0c7",
        "a window below 0.3 of its configuration's median (a pause) counts nowhere",
        lambda key: True,
    ),
    PolicyChange("3d40e07", "a pool's first `window_s` of steps is warm-up", lambda key: True),
    PolicyChange(
        "b4643da",
        "a start still the best when the climb ends, measured in its one window, is measured again",
        lambda key: True,
    ),
    PolicyChange(
        "1358da7",
        "the best is measured again wherever its closest rival lies within the noise band, also"
        " against a rival measured to `max_windows`",
        lambda key: True,
    ),
    PolicyChange(
        "a07698a",
        "the best is measured again where its fastest rival lies beyond the band above it",
        lambda key: True,
    ),
    PolicyChange(
        "db2b15a",
        "a starved pool short of workers by more than a rung tries more workers before a deeper"
        " prefetch",
        lambda key: True,
    ),
    PolicyChange(
        "ea4b35d",
        "a best made by its own windows is measured again before a rival measured to"
        " `max_windows` is judged on the difference alone",
        lambda key: True,
    ),
    PolicyChange(
        "ab5bd00",
        "where a window is a whole epoch, the jump's pool runs at the shallowest prefetch",
        lambda key: key in ("tiny-epochs", "open-30"),
        "the workloads whose windows are whole epochs: tiny-epochs and open-30",
    ),
    PolicyChange(
        "dbe3038",
        "the start at `num_workers=0` waits for no RAM reading",
        lambda key: key == "short-run",
        "short-run, whose start has no warm-up step to spare",
    ),
)


def changes_text() -> str:
    """The changes, for the page: each with what it changed and, where not all, whom."""
    return "; ".join(
        f"`{c.commit}`, {c.what}" + (f" ({c.where})" if c.where else "") for c in POLICY_CHANGES
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
    for change in reversed(POLICY_CHANGES):
        if not change.reaches(key):
            continue
        has = _has(commit, change.commit)
        if has != 0:
            return f"before `{change.commit}`" if has == 1 else "n/a"
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
        f" it reaches that workload. Its changes, oldest first: {changes_text()}.",
        "",
        table(head, "|---|---:|---:|---|---|---|---|---|", lines),
        "",
    ]
