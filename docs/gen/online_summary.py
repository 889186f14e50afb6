"""The online page's first table: per bench workload, its newest figure of at least three rounds,
from whichever committed run holds it (a historical record, such as an experiment's run of a policy
that was not kept, is left out)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sources import ROOT, Source, read

from autotune.bench.cells import table
from autotune.bench.online_model import OnlineReport, OnlineRow
from autotune.bench.render_online import ratios
from autotune.bench.targets import MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE


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
                     f" {source.date[:10]}, `{source.commit.split()[0]}` |"
                     f" [`{Path(source.path).parent.name}`](../benchmarks/{source.download}) |")
    met = sum(r.targets.get("online_whole") is True and r.targets.get("online_after") is True
              for r, _ in rows.values())
    head = ("| workload | whole run (worst) | after tuning (worst) | ideal (c) | (b) chose |"
            " measured, commit | file |")
    return [f"Each workload's newest run of three rounds or more, worst round (targets: whole run"
            f" ≥ {MIN_ONLINE_WHOLE}, after tuning ≥ {MIN_ONLINE_AFTER}). Both targets met on {met} of"
            f" {len(rows)} workloads. Each run's own section below has its notes: every miss's"
            " numbers and cause.", "",
            table(head, "|---|---:|---:|---|---|---|---|", lines), ""]
