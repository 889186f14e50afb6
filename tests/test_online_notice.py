"""The user's two lines: a plain script with autotune.DataLoader (no logging configured) prints one
line on stderr when the loader settles and one at exit, each with the choice, the gain and the
report's path; AUTOTUNE_QUIET=1, the `notices` option and the logger's level silence them; a rank
other than 0 says nothing."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap

import pytest

from autotune.online.notice import Moment, say
from autotune.online.options import Notices

SCRIPT = textwrap.dedent("""
    import logging, sys
    import torch
    import autotune

    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 96

        def __getitem__(self, i):
            return torch.tensor([i * i])

    if __name__ == "__main__":
        if "--warning" in sys.argv:
            logging.getLogger("autotune").setLevel(logging.WARNING)
        online = {"max_workers": 1, "fixed": ["prefetch_factor", "persistent_workers",
                  "pin_memory"], "window_steps": 2, "warmup_steps": 1, "max_explore_steps": 40}
        if "--none" in sys.argv:
            online["notices"] = "none"
        loader = autotune.DataLoader(Squares(), batch_size=2, online=online)
        for epoch in range(2):
            for batch in loader:
                pass
        print("TRAINED")
""")


def _run(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT)
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("AUTOTUNE_QUIET", "AUTOTUNE_ONLINE", "RANK")
    }
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env={**environ, **env},
    )
    assert done.returncode == 0 and "TRAINED" in done.stdout, done.stderr[-3000:]
    return done


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("autotune.DataLoader")]


@pytest.mark.slow
def test_a_plain_script_prints_one_line_when_settled_and_one_at_exit(tmp_path):
    lines = _notices(_run(tmp_path).stderr)
    assert len(lines) == 2, lines
    settled, final = lines
    # The speedup reads "2.31x" where measured, "speedup n/a" where the run was too short for
    # a window on a slow machine: either way over the start.
    over_start = re.compile(r" samples/s, (\d+\.\d\dx|speedup n/a) over w.+ as started; ")
    assert settled.startswith("autotune.DataLoader chose ") and over_start.search(settled)
    assert final.startswith("autotune.DataLoader (at exit) chose ") and over_start.search(final)
    for line in lines:
        report = line.rsplit("; report: ", 1)[1]
        assert (tmp_path / report).is_file(), line


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, env", [((), {"AUTOTUNE_QUIET": "1"}), (("--none",), {}), (("--warning",), {})]
)
def test_the_lines_can_be_silenced(tmp_path, args, env):
    done = _run(tmp_path, *args, **env)
    assert _notices(done.stderr) == [], done.stderr
    assert list((tmp_path / "results").rglob("report.md"))  # silenced, still written


@pytest.fixture
def notice_records(caplog):
    with caplog.at_level(logging.INFO, logger="autotune"):
        yield lambda: [r.message for r in caplog.records if r.name == "autotune.notice"]


def test_only_rank_zero_speaks(monkeypatch, notice_records):
    monkeypatch.delenv("AUTOTUNE_QUIET", raising=False)
    monkeypatch.setenv("RANK", "1")
    say("from rank 1", Notices.ALL, Moment.SETTLED)
    monkeypatch.setenv("RANK", "0")
    say("from rank 0", Notices.ALL, Moment.SETTLED)
    assert notice_records() == ["from rank 0"]


def test_settled_only_leaves_the_exit_line_to_autotune_run(monkeypatch, notice_records):
    monkeypatch.delenv("AUTOTUNE_QUIET", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    say("settled", Notices.SETTLED, Moment.SETTLED)
    say("at exit", Notices.SETTLED, Moment.EXIT)
    assert notice_records() == ["settled"]


def test_autotune_run_asks_its_script_for_the_settled_line_only():
    from autotune.cli.run_cmd import child_environment
    from autotune.online.options import ENV_VAR, resolve

    env = child_environment(resolve({}, environ={}), environ={})
    assert resolve(None, environ=env).notices is Notices.SETTLED
    quiet = child_environment(resolve({"notices": "none"}, environ={}), environ={})
    assert resolve(None, environ=quiet).notices is Notices.NONE
    assert ENV_VAR in env


def test_a_speedup_not_measured_reads_n_a_not_a_multiple():
    from autotune.online.finish import summary
    from autotune.recipe.model import Measured

    line = summary(
        "w1 pf2 persist",
        Measured(samples_per_s=None, baseline_samples_per_s=None, speedup=None, trials=1),
        "w1 pf2",
    )
    assert "speedup n/a over w1 pf2 as started" in line and "n/ax" not in line, line
    line = summary(
        "w4 pf2",
        Measured(samples_per_s=100.0, baseline_samples_per_s=40.0, speedup=2.5, trials=2),
        "w0",
    )
    assert "2.50x over w0 as started; 2 configurations in" in line, line
    alone = Measured(samples_per_s=None, baseline_samples_per_s=None, speedup=None, trials=1)
    assert "; 1 configuration in" in summary("w1 pf2", alone, "w1 pf2")
    uncounted = alone.model_copy(update={"trials": None})
    assert "; n/a configurations in" in summary("w1 pf2", uncounted, "w1 pf2")


def test_every_speedup_line_says_n_a_in_words_where_none_was_measured():
    from autotune.recipe.model import speedup_text

    assert speedup_text(None) == "speedup n/a" and speedup_text(2.5) == "2.50x"


def test_the_report_counts_one_window_in_the_singular():
    from autotune.online.climb_types import ClimbSettings
    from autotune.online.finish import report
    from autotune.online.measurement import Measurement
    from autotune.online.options import TUNED
    from autotune.online.policy import HillClimb
    from autotune.space.config import LoaderConfig

    settings = ClimbSettings(epoch_steps=600, usable_cpus=2, cuda=False)
    climb = HillClimb(LoaderConfig(), TUNED, settings)
    start = climb.measured[LoaderConfig()]
    start.rates, start.spans, start.steps = [50.0], [0.2], 10
    two = {"spans": [0.1, 0.1], "steps": 40}
    rival = Measurement(LoaderConfig(num_workers=2), rates=[90.0, 95.0], **two)
    best = Measurement(LoaderConfig(num_workers=4), rates=[120.0, 118.0], **two)
    climb.measured.update({rival.config: rival, best.config: best})
    climb.best = best
    text = report(climb, "D-dl", "summary", 16, None, climb.current)
    assert "ok (1 window, 10 steps)" in text and "ok (2 windows, 40 steps)" in text, text
