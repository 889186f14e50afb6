"""What a user gets from the package: one version, the license, the distribution name, and which
autotune (version and commit) made each recipe."""

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import autotune
from autotune.cli.app import app
from autotune.made_by import git_commit, this_commit, version_line
from autotune.recipe.model import MadeBy, Recipe, load_recipe
from autotune.space.config import LoaderConfig

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


@pytest.fixture
def pyproject():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_one_version_source(pyproject):
    project = pyproject["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, _, name = attr.rpartition(".")
    assert getattr(__import__(module, fromlist=[name]), name) == autotune.__version__


def test_distribution_name_license_and_classifiers(pyproject):
    project = pyproject["project"]
    assert project["name"] == "dataloader-autotune"  # `autotune` on the index is another project
    assert project["scripts"] == {"autotune": "autotune.cli.entry:main"}
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text  # the full text, not a pointer to it
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    claimed = {
        c.rsplit(":: ", 1)[1]
        for c in project["classifiers"]
        if c.startswith("Programming Language :: Python :: 3.")
    }
    assert (
        project["requires-python"]
        == f">={min(claimed, key=lambda v: tuple(map(int, v.split('.'))))}"
    )


def test_version_option():
    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.output.strip() == version_line()
    assert shown.output.startswith(f"autotune {autotune.__version__} (")


def test_git_commit_only_at_a_checkouts_root(tmp_path):
    assert git_commit(tmp_path) is None  # an installed package: no .git beside it
    repo = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"],
        check=True,
    )
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert git_commit(repo) == head
    (repo / "f").write_text("changed")
    assert git_commit(repo) == f"{head}+dirty"
    # site-packages inside a project's .venv: the project's commit is not autotune's
    site = repo / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    assert git_commit(site) is None


def test_every_recipe_records_the_autotune_that_made_it(tmp_path):
    recipe = Recipe.from_config(
        LoaderConfig(num_workers=2, prefetch_factor=2),
        measured={"samples_per_s": 1.0, "baseline_samples_per_s": 1.0, "speedup": 1.0},
        workload={"name": "t"},
        environment={},
    )
    assert recipe.made_by == MadeBy(version=autotune.__version__, commit=this_commit())
    path = recipe.save(tmp_path / "r.json")
    assert load_recipe(path).made_by == recipe.made_by
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 0 and "made by" in shown.output
    assert autotune.__version__ in shown.output
    assert (this_commit() or "installed package") in shown.output


def test_a_recipe_from_before_reads_and_says_so(tmp_path):
    old = next(ROOT.glob("recipes/example-*.json"))
    recipe = load_recipe(old)
    assert recipe.made_by is None
    shown = runner.invoke(app, ["show", str(old)])
    assert shown.exit_code == 0 and "not recorded" in shown.output
