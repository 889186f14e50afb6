"""`autotune run`: an unmodified script gets autotune.DataLoader for torch's, in its own process and
in the Python processes it starts; the exit code is the script's; bad command lines are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.cli.run_cmd import child_environment, command_line, new_run_folders
from autotune.errors import OptionsError
from autotune.online.options import ENV_VAR, OnlineOptions

REPO = Path(__file__).resolve().parents[1]


def _run_under_boot(tmp_path: Path, code: str, extra_path: str | None = None) -> str:
    """`code` in a fresh interpreter started as `autotune run` starts the script."""
    env = child_environment(OnlineOptions(results_dir=None))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env["PYTHONPATH"], extra_path, str(REPO)) if p)
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_torch_dataloader_is_autotunes_once_torch_is_imported(tmp_path):
    out = _run_under_boot(
        tmp_path,
        """
        import sys
        print("torch before:", "torch" in sys.modules)
        from torch.utils.data import DataLoader
        import torch.utils.data.dataloader as dl
        import autotune
        loader = DataLoader(list(range(10)), batch_size=2)
        print(DataLoader is autotune.DataLoader, dl.DataLoader is autotune.DataLoader,
              isinstance(loader, autotune.DataLoader), [b.tolist() for b in loader][:2])
    """,
    )
    # Nothing imported torch before the script did; then every name points at autotune's class.
    assert "torch before: False" in out
    assert "True True True [[0, 1], [2, 3]]" in out


@pytest.mark.parametrize("how", [["-m", "torch.distributed.run"], ["-mtorch.distributed.run"]])
def test_a_launcher_process_is_left_unpatched(how):
    """torchrun and the like only start the ranks, which patch themselves: the launcher, which
    imports torch while `-m` finds it, does not pay autotune's import before any rank starts."""
    env = child_environment(OnlineOptions(results_dir=None))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *how, "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "torch" in imported and "autotune.online.loader" not in imported


def test_the_tuner_is_imported_when_a_loader_is_made_not_with_torch(tmp_path):
    """A process that imports torch and makes no loader (a spawned worker re-importing the script,
    a compiler's worker) gets the patched class without the tuner's import; the first loader
    made imports it."""
    out = _run_under_boot(
        tmp_path,
        """
        import sys
        from torch.utils.data import DataLoader
        import autotune
        tuner = ("autotune.online.session", "autotune.online.setup", "pydantic")
        print(DataLoader is autotune.DataLoader, [m for m in tuner if m in sys.modules])
        loader = DataLoader(list(range(4)), batch_size=2)
        print([m for m in tuner if m in sys.modules], [b.tolist() for b in loader])
    """,
    )
    assert out.splitlines() == [
        "True []",
        "['autotune.online.session', 'autotune.online.setup', 'pydantic'] [[0, 1], [2, 3]]",
    ]


def test_a_spawned_worker_does_not_import_the_tuner(tmp_path):
    out = _run_under_boot(
        tmp_path,
        """
        import sys
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Probe(Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                return torch.tensor(int("autotune.online.session" in sys.modules))

        if __name__ == "__main__":
            loader = DataLoader(Probe(), batch_size=1, num_workers=1,
                                multiprocessing_context="spawn")
            print([int(b) for b in loader], "autotune.online.session" in sys.modules)
    """,
    )
    assert out.splitlines()[-1] == "[0, 0] True"


def test_a_sitecustomize_already_on_the_path_still_runs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.SITE_WAS_HERE = True\n")
    out = _run_under_boot(
        tmp_path,
        "import builtins\nprint(getattr(builtins, 'SITE_WAS_HERE', False))\n",
        extra_path=str(site),
    )
    assert out.strip() == "True"


def test_an_autotune_that_cannot_patch_leaves_the_script_torchs_loader(tmp_path):
    """A broken install (here an autotune package that fails to import, found first on the path)
    costs the tuning, never the training: one line on stderr, torch's own DataLoader."""
    broken = tmp_path / "broken"
    (broken / "autotune").mkdir(parents=True)
    (broken / "autotune" / "__init__.py").write_text(
        "raise ImportError('a dependency is missing')\n"
    )
    env = child_environment(OnlineOptions(results_dir=None))
    env["PYTHONPATH"] = os.pathsep.join((env["PYTHONPATH"], str(broken)))
    script = tmp_path / "script.py"
    script.write_text(
        "from torch.utils.data import DataLoader\n"
        "print(type(DataLoader(list(range(4)), batch_size=2)).__module__,"
        " [b.tolist() for b in DataLoader(list(range(4)), batch_size=2)])\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "torch.utils.data.dataloader [[0, 1], [2, 3]]"
    assert (
        "autotune run: torch's DataLoader is not tuned in this process (ImportError: a dependency"
        " is missing); the script runs with torch's own" in done.stderr
    )


def test_the_options_reach_the_child_as_json():
    env = child_environment(
        OnlineOptions(results_dir=Path("out"), fixed=("num_workers",)), {"A": "1"}
    )
    assert json.loads(env[ENV_VAR]) == {
        "results_dir": "out",
        "fixed": ["num_workers"],
        "notices": "settled",
    }  # the command prints the reports
    assert env["A"] == "1" and env["PYTHONPATH"].endswith(os.path.join("online", "boot"))


def test_command_lines():
    assert command_line(["python", "train.py", "--lr", "1"]) == ["python", "train.py", "--lr", "1"]
    assert command_line([__file__, "-x"]) == [sys.executable, __file__, "-x"]
    with pytest.raises(OptionsError, match="needs a command"):
        command_line([])
    with pytest.raises(OptionsError, match="no script missing.py"):
        command_line(["missing.py"])


def test_run_passes_the_scripts_exit_code_and_reports_no_tuned_loader(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nsys.exit(3)\n")
    result = CliRunner().invoke(app, ["run", "--results-dir", str(tmp_path / "r"), str(script)])
    assert result.exit_code == 3
    assert "no loader was tuned" in result.output
    bad = CliRunner().invoke(app, ["run", "--fix", "batch_size", str(script)])
    assert bad.exit_code == 2 and "'batch_size' is not a knob" in bad.output


def test_only_the_run_folders_written_since_the_start_are_reported(tmp_path):
    runs = tmp_path / "runs"
    old = runs / "20260101-000000-online-A"
    old.mkdir(parents=True)
    (old / "recipe.json").write_text("{}")
    before = set(runs.glob("*-online-*"))
    new = runs / "20260101-000001-online-B"
    new.mkdir()
    (new / "recipe.json").write_text("{}")
    (runs / "20260101-000002-online-C").mkdir()  # nothing written into it
    assert new_run_folders(tmp_path, before) == [new]


def test_options_already_in_the_environment_are_kept_unless_a_flag_says_otherwise(
    tmp_path, monkeypatch
):
    script = tmp_path / "show.py"
    script.write_text(f"import os\nprint('OPTIONS', os.environ[{ENV_VAR!r}])\n")
    monkeypatch.setenv(ENV_VAR, json.dumps({"fixed": ["pin_memory"]}))
    kept = subprocess.run(
        [sys.executable, "-m", "autotune", "run", "--results-dir", str(tmp_path), str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(kept.stdout.split("OPTIONS ", 1)[1].splitlines()[0])["fixed"] == [
        "pin_memory"
    ]
    flagged = subprocess.run(
        [
            sys.executable,
            "-m",
            "autotune",
            "run",
            "--results-dir",
            str(tmp_path),
            "--fix",
            "num_workers",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(flagged.stdout.split("OPTIONS ", 1)[1].splitlines()[0])["fixed"] == [
        "num_workers"
    ]


def test_everything_after_the_script_is_the_scripts(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint('ARGS', sys.argv[1:])\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autotune",
            "run",
            "--results-dir",
            str(tmp_path / "r"),
            str(script),
            "--epochs",
            "10",
            "--debug",
            "--results-dir",
            "out",
            "--",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ARGS ['--epochs', '10', '--debug', '--results-dir', 'out', '--', 'x']" in done.stdout


def test_an_unwritable_results_dir_is_one_line_before_the_script_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('')\n")
    result = CliRunner().invoke(app, ["run", "--results-dir", str(blocker / "sub"), str(script)])
    assert result.exit_code == 2 and "--results-dir" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not marker.exists()


def test_exit_codes_are_the_shells():
    from autotune.cli.run_cmd import exit_code

    assert (
        exit_code(0) == 0 and exit_code(3) == 3 and exit_code(-15) == 143 and exit_code(-2) == 130
    )


def _wait_under_autotune_run(tmp_path: Path, handlers: str) -> subprocess.Popen:
    """`autotune run` on a script that installs `handlers`, says it is ready and sleeps; returned
    once it is ready. autotune run leads a session of its own (its group id is its pid)."""
    import time

    script, ready = tmp_path / "waits.py", tmp_path / "ready"
    script.write_text(
        textwrap.dedent("""
        import signal, sys, time
        {handlers}
        open({ready!r}, "w").write("")
        time.sleep(60)
    """).format(handlers=handlers, ready=str(ready))
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autotune",
            "run",
            "--results-dir",
            str(tmp_path / "r"),
            str(script),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def test_sigterm_reaches_the_script_which_ends_with_its_code(tmp_path):
    import signal

    proc = _wait_under_autotune_run(
        tmp_path, "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))"
    )
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 7  # the script's own handler decided, and its code came back


def test_autotune_run_starts_the_script_before_importing_torch_or_optuna(tmp_path):
    """The whole CLI imports torch and optuna (seconds); `autotune run` imports neither in its own
    process, where the time would be paid before the user's script started, nor rich, which it
    needs only for the reports it prints once the script has ended."""
    code = textwrap.dedent(f"""
        import subprocess, sys
        class Spy(subprocess.Popen):
            def __init__(self, *args, **kwargs):
                heavy = ("rich", "torch", "optuna")
                print("AT START", sorted(m for m in heavy if m in sys.modules))
                super().__init__(*args, **kwargs)
        subprocess.Popen = Spy
        sys.argv = ["autotune", "run", "--results-dir", {str(tmp_path)!r}, "--epochs", "3", "--",
                    sys.executable, "-c", "print('SCRIPT-RAN')"]
        from autotune.cli.entry import main
        try:
            main()
        except SystemExit as exc:
            print("EXIT", exc.code)
        print("HEAVY", sorted(m for m in ("torch", "optuna") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "SCRIPT-RAN" in done.stdout and "EXIT 0" in done.stdout, done.stdout + done.stderr
    assert "AT START []" in done.stdout and "HEAVY []" in done.stdout


@pytest.mark.parametrize("to_group", [False, True], ids=["to-autotune-run", "to-the-group"])
@pytest.mark.parametrize("handled, code", [(True, 5), (False, 130)])
def test_sigint_reaches_the_script_once_and_autotune_run_reports_and_passes_its_code(
    tmp_path, handled, code, to_group
):
    """SIGINT to `autotune run` alone, or to its whole process group (as a supervisor or
    `kill -INT -PGID` sends it), outside a terminal: the script gets it once, autotune run
    survives it, waits for the script to end, says what it wrote and returns the script's code
    (130 where the script died of the signal). A second SIGINT would end a script whose handler
    exits with 5 with 130 instead, while its handler ran."""
    import signal

    calls = tmp_path / "calls"
    # The handler notes each call and takes a second to exit: a second SIGINT would be seen.
    handler = (
        f"signal.signal(signal.SIGINT, lambda *a: (open({str(calls)!r}, 'a').write('x'),"
        " time.sleep(1), sys.exit(5)))"
        if handled
        else ""
    )
    proc = _wait_under_autotune_run(tmp_path, handler)
    if to_group:
        os.killpg(proc.pid, signal.SIGINT)  # start_new_session: its group id is its pid
    else:
        os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, out
    assert not handled or calls.read_text() == "x"  # once
    assert "no loader was tuned" in out  # it went on to report, after the signal
    assert "autotune/cli" not in out  # no traceback of autotune run's own (the script's may be)


def test_a_script_whose_autotune_run_is_killed_does_not_train_on_as_an_orphan(tmp_path):
    """Outside a terminal the script has a process group of its own (so that a signal to the
    group reaches it once); SIGKILL to autotune run's group then no longer reaches it, so it is
    sent SIGTERM when autotune run dies (Linux)."""
    import signal
    import time

    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    ended = tmp_path / "ended"
    proc = _wait_under_autotune_run(
        tmp_path,
        "signal.signal(signal.SIGTERM, lambda *a:"
        f" (open({str(ended)!r}, 'w').write('SIGTERM'), sys.exit(0)))",
    )
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    # open() creates the file before write() fills it: wait for its content, not its existence
    while not (ended.exists() and ended.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ended.read_text() == "SIGTERM"


def test_a_signal_before_the_script_has_started_is_sent_to_it_once_it_has():
    """autotune run's handlers are in place before the script starts; a SIGTERM that came in
    between is not lost (nor does it end autotune run, leaving the script without it)."""
    import signal

    from autotune.cli.run_cmd import forwarded_signals

    class Child:
        pid = os.getpid()
        got: list[int] = []

        def send_signal(self, signum: int) -> None:
            self.got.append(signum)

    child = Child()
    before = signal.getsignal(signal.SIGTERM)
    with forwarded_signals() as started:
        os.kill(os.getpid(), signal.SIGTERM)  # handled at once, in this (the main) thread
        assert child.got == []
        started(child)
        assert child.got == [signal.SIGTERM]
        os.kill(os.getpid(), signal.SIGTERM)
        assert child.got == [signal.SIGTERM, signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is before
