"""The documentation: the site builds with --strict (a broken link, a missing page or a reference
that fails to generate fails here), the generated references hold every CLI option and every
recipe and online-options field, and the README keeps its promises (the two quick-start commands
CI runs, and a results table generated from the committed results)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "gen"))

import cli_ref  # noqa: E402
import model_ref  # noqa: E402
import pages  # noqa: E402
import readme  # noqa: E402

QUICK_START = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && autotune tune"
TESTS = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest"
)


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="the docs extra is not installed: pip install -e '.[docs]'",
)
def test_the_site_builds_strict(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for page in (
        "index.html",
        "reference/cli/index.html",
        "reference/recipe/index.html",
        "reference/online-options/index.html",
        "reference/python-api/index.html",
        "benchmarks/offline/index.html",
    ):
        assert (tmp_path / "site" / page).is_file(), page


def _help_options(command: str) -> set[str]:
    """The options `--help` lists: the flags at the start of its option rows (not those its
    descriptions mention, such as the `autotune tune` options `--tune-args` passes on)."""
    out = (
        CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "250", "NO_COLOR": "1"}).output
    )
    found = set()
    for line in out.splitlines():
        row = line.strip("│ ").lstrip("* ")
        while row.startswith("--"):
            flag, _, row = row.partition(" ")
            found.add(flag)
            row = row.lstrip()
    return found - {"--help"}


@pytest.mark.parametrize("command", list(cli_ref.command().commands))
def test_the_cli_reference_holds_every_option_help_shows(command):
    page = cli_ref.page()
    section = page.split(f"## `autotune {command}`", 1)[1].split("\n## ", 1)[0]
    wanted = _help_options(command) | set(cli_ref.options(cli_ref.command().commands[command]))
    assert wanted, command
    missing = sorted(o for o in wanted if f"`{o}`" not in section)
    assert missing == []


def test_the_recipe_and_online_references_hold_every_field():
    pages = {"OnlineOptions": model_ref.online_options_page()}
    recipe = model_ref.recipe_page()
    for model, fields in model_ref.field_names().items():
        text = pages.get(model) or recipe.split(f"## {model}\n", 1)[1].split("\n## ", 1)[0]
        missing = [f for f in fields if f"| `{f}` |" not in text]
        assert missing == [], model


def test_the_readme_keeps_the_two_commands_ci_runs():
    text = (ROOT / "README.md").read_text()
    assert QUICK_START in text and TESTS in text
    assert TESTS in (ROOT / ".ci" / "run").read_text()


def test_the_readme_results_table_is_the_generated_one():
    """Regenerate with `python docs/gen/readme.py` after committing new results."""
    text = (ROOT / "README.md").read_text()
    assert readme.block() in text
    assert len(text.splitlines()) <= 250


@pytest.mark.parametrize("page", sorted(pages.expected()))
def test_the_committed_page_is_the_generated_one(page):
    committed = ROOT / "docs" / page
    assert committed.is_file() and committed.read_text() == pages.expected()[page], (
        f"docs/{page} differs from what the code generates: run `{pages.COMMAND}` and commit it"
    )


# [text](target) and [text]: target, outside code spans and fenced blocks.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_points_to_a_file_that_exists(doc):
    """As the repository view follows them: relative to the page, to a file in the checkout."""
    broken = [t for t in _links(doc) if not (doc.parent / t.split("#")[0]).exists()]
    assert not broken, f"{doc.relative_to(ROOT)} links to files that do not exist: {broken}"
