"""`autotune report --study NAME --storage URL`: merge a shared study (or a sweep) into recipes and
a table."""

from __future__ import annotations

from pathlib import Path

import typer

from autotune.cli.common import console, one_line_errors
from autotune.cluster.merge import merge
from autotune.recipe.model import shown, speedup_text
from autotune.report import table
from autotune.report.merged import extra_columns, merged_rows, slug, write_merged


@one_line_errors
def report(
    study: str = typer.Option(
        ..., "--study", help="the study the tasks joined (a sweep: its base name)"
    ),
    storage: str = typer.Option(
        ..., "--storage", help="the storage they shared: journal file or RDB URL"
    ),
    out: Path | None = typer.Option(
        None, "--out", help="folder for the recipes and the table (default: results/studies/STUDY)"
    ),
) -> None:
    """Merge every process's trials of a study, or of each point of a sweep, into recipes and one
    table."""
    reports = merge(storage, study)
    out_dir = out or Path("results") / "studies" / slug(study)
    files = write_merged(reports, out_dir, f"autotune: study {study}")
    console.print(
        table.to_rich(
            merged_rows(reports),
            title=f"autotune: study {study}",
            extra=extra_columns(reports),
            width=console.width,
        )
    )
    for rep in reports:
        name = rep.point or study
        if rep.recipe is None or rep.best is None:
            first = rep.baseline.error if rep.baseline is not None else "no trial recorded"
            console.print(f"{name}: every configuration failed ({first})", highlight=False)
            continue
        m = rep.recipe.measured
        console.print(
            f"{name}: {rep.best.config.label()} {shown(m.samples_per_s, '.1f')} samples/s"
            f" ({speedup_text(m.speedup)} over PyTorch defaults), {len(rep.trials)} trials from"
            f" {len(rep.nodes)} node(s) -> {files[rep.study]}",
            highlight=False,
            soft_wrap=True,
        )  # one line per point however long: paths stay whole
    console.print(f"table: {files['table_md']}", highlight=False)
