"""Markdown pieces every bench report uses: formatted figures, a results file's stamp line, a
target's mark, a table and the notes that explain the misses."""

from __future__ import annotations

from benchmarks.model import AccuracyReport, BenchReport
from benchmarks.online_model import OnlineReport
from benchmarks.provenance import Recorded


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def signed_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}%"


def rate(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0f} samples/s"


def measured_lines(report: BenchReport | AccuracyReport | OnlineReport) -> list[str]:
    """What was run, how long, where, when and on which commit; and, for a past record, why."""
    env = report.environment
    commit = f", commit {report.commit}" if report.commit else ""
    lines = [
        f"`{report.command}` — {report.total_s / 60:.1f} min on {env.get('usable_cpus')} usable"
        f" CPUs, device {env.get('device')}, torch {env.get('torch')};"
        f" {report.created:%Y-%m-%d %H:%M} UTC{commit}.",
        "",
    ]
    return lines + (
        [f"> **Historical record.** {report.historical}", ""] if report.historical else []
    )


def mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


def table(header: str, align: str, rows: list[str]) -> str:
    return "\n".join([header, align, *rows]) + "\n"


def notes_lines(report: Recorded) -> list[str]:
    """The misses, explained after the run (the results file's `notes`)."""
    if not report.notes:
        return []
    return ["The misses, explained after the run:", "", *(f"- {n}" for n in report.notes), ""]
