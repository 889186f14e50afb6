"""The `autotune` console command. `autotune run` takes a path of its own: the user's script
starts before anything heavy is imported here (the whole application imports torch and optuna,
seconds that a short training would otherwise wait for)."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["run"]:
        from autotune.cli.run_cmd import run_app

        run_app()(args=sys.argv[2:], prog_name="autotune run")
        return
    from autotune.cli.app import main as whole

    whole()
