"""The bench's files: Markdown for people, JSON for machines."""

from __future__ import annotations

from pathlib import Path

from autotune.errors import OptionsError
from benchmarks.model import AccuracyReport, BenchReport
from benchmarks.online_model import OnlineReport
from benchmarks.render import accuracy_markdown, to_markdown
from benchmarks.render_online import online_markdown


def check_writable(out_dir: Path) -> None:
    """Fail now, not after half an hour of measuring."""
    probe = out_dir / ".write-test"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise OptionsError(
            f"cannot write to {out_dir}: {exc.strerror or exc}; pass --out DIR"
        ) from None


def _write(markdown: str, json_text: str, out_dir: Path, stem: str) -> tuple[Path, Path]:
    check_writable(out_dir)
    md, js = out_dir / f"{stem}.md", out_dir / f"{stem}.json"
    md.write_text(markdown)
    js.write_text(json_text + "\n")
    return md, js


def write_report(report: BenchReport, out_dir: Path, stem: str) -> tuple[Path, Path]:
    return _write(to_markdown(report), report.model_dump_json(indent=2), out_dir, stem)


def write_accuracy(report: AccuracyReport, out_dir: Path, stem: str) -> tuple[Path, Path]:
    return _write(accuracy_markdown(report), report.model_dump_json(indent=2), out_dir, stem)


def write_online(report: OnlineReport, out_dir: Path, stem: str) -> tuple[Path, Path]:
    return _write(online_markdown(report), report.model_dump_json(indent=2), out_dir, stem)
