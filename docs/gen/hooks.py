"""MkDocs hooks: the reference and benchmark pages are generated from the code and the committed
results at every build, so they cannot drift from either. A generator that fails fails the build."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the generators beside this file
# The repository root: the benchmark pages render with the `benchmarks` harness, not installed.
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))

from mkdocs.structure.files import File, Files  # noqa: E402

import cli_ref  # noqa: E402
import knobs_ref  # noqa: E402
import model_ref  # noqa: E402
import results_pages  # noqa: E402

KNOB_TABLE = "<!-- knob-table -->"


def generated_pages() -> dict[str, str]:
    return {"reference/cli.md": cli_ref.page(), "reference/recipe.md": model_ref.recipe_page(),
            "reference/online-options.md": model_ref.online_options_page(),
            **results_pages.pages()}


def on_files(files: Files, config) -> Files:
    for path, text in generated_pages().items():
        files.append(File.generated(config, path, content=text))
    for path, source in results_pages.copies().items():
        files.append(File.generated(config, path, abs_src_path=str(source)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    """The knob registry's table, wherever a page asks for it."""
    return markdown.replace(KNOB_TABLE, knobs_ref.knob_table())
