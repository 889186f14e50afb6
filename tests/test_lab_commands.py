"""`autotune bench` and `autotune overhead` come from the repository's benchmarks/ in a clone; an
installed package, which has none, answers them in one line."""

import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from autotune.cli import lab

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]


def _app(root: Path) -> typer.Typer:
    app = typer.Typer()
    lab.register(app, "bench_cmd", "bench", root=root)
    lab.register(app, "overhead_cmd", "overhead", root=root)
    return app


def test_in_a_clone_the_commands_are_the_benchmarks_own():
    import benchmarks.bench_cmd
    import benchmarks.overhead_cmd

    app = _app(REPO)
    commands = {info.name: info.callback for info in app.registered_commands}
    assert commands["bench"].__wrapped__ is benchmarks.bench_cmd.bench.__wrapped__
    assert commands["overhead"].__wrapped__ is benchmarks.overhead_cmd.overhead.__wrapped__


def test_without_the_benchmarks_each_command_says_to_run_it_from_a_clone(tmp_path):
    app = _app(tmp_path)  # an installed package: no benchmarks/ beside it
    for args in (["bench", "--quick", "--workloads", "demo"], ["overhead", "sim:cpu_ms=1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, result.output
        assert f"`autotune {args[0]}`" in lines[0] and "clone" in lines[0]


def test_an_unrelated_benchmarks_package_found_first_is_not_loaded(tmp_path, monkeypatch):
    other, clone = tmp_path / "other", tmp_path / "clone"
    for root in (other, clone):
        (root / "benchmarks").mkdir(parents=True)
        (root / "benchmarks" / "__init__.py").write_text("")
    # Another `benchmarks` ahead of the clone on the path, as an installed package would be.
    monkeypatch.setattr(sys, "path", [str(other), *sys.path, str(clone)])
    saved = {
        name: sys.modules.pop(name)
        for name in list(sys.modules)
        if name == "benchmarks" or name.startswith("benchmarks.")
    }
    try:
        result = runner.invoke(_app(clone), ["bench"])
    finally:
        sys.modules.pop("benchmarks", None)
        sys.modules.update(saved)
    assert result.exit_code == 2 and "clone" in result.output
