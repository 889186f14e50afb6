"""The merged report of a shared study or a sweep: one table over every point, one recipe per
point."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.errors import OptionsError
from autotune.report import table

if TYPE_CHECKING:
    from autotune.cluster.merge import StudyReport


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "-", text).strip("-") or "study"


def extra_columns(reports: list[StudyReport]) -> tuple[str, ...]:
    """Where each trial comes from: its sweep point (in a sweep), its node, its GPU (where any)."""
    gpus = any((t.origin or {}).get("gpu") for r in reports for t in r.trials)
    return (
        *(("point",) if any(r.point for r in reports) else ()),
        "node",
        *(("gpu",) if gpus else ()),
    )


def merged_rows(reports: list[StudyReport]) -> list[dict[str, Any]]:
    out = []
    for report in reports:
        for trial, row in zip(
            report.trials, table.rows(report.trials, report.best, report.baseline), strict=True
        ):
            origin = trial.origin or {}
            row.update(point=report.point, node=origin.get("node"), gpu=origin.get("gpu"))
            out.append(row)
    return out


def recipe_name(report: StudyReport) -> str:
    return "recipe.json" if report.point is None else f"recipe-{slug(report.point)}.json"


def write_merged(reports: list[StudyReport], out_dir: Path, title: str) -> dict[str, Path]:
    """recipe.json (or recipe-POINT.json per sweep point), trials.md and trials.csv in `out_dir`."""
    rows, extra = merged_rows(reports), extra_columns(reports)
    files: dict[str, Path] = {}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for report in reports:
            if report.recipe is not None:
                files[report.study] = report.recipe.save(out_dir / recipe_name(report))
        files["table_md"] = out_dir / "trials.md"
        files["table_md"].write_text(f"# {title}\n\n" + table.to_markdown(rows, extra=extra))
        files["table_csv"] = out_dir / "trials.csv"
        files["table_csv"].write_text(table.to_csv(rows, extra=extra))
    except OSError as exc:
        raise OptionsError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    return files
