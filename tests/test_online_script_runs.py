"""`autotune run` on an in-repo script that prints what its loader handed it
(tests/frameworks/digest_train.py): the batches are torch's, and a run killed while still exploring
returns the child's signal code and leaves a recipe marked incomplete."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from script_runs import (
    FRAMEWORKS,
    autotune_run,
    autotune_run_command,
    online_folders,
    output_tail,
    reports_of_every_loader,
)

DIGEST = FRAMEWORKS / "digest_train.py"


def _epoch_digests(out: str) -> list[str]:
    return re.findall(r"^EPOCH \d+ STEPS \d+ DIGEST \w+$", out, re.MULTILINE)


@pytest.mark.slow
def test_the_training_loaders_batches_are_torchs(tmp_path):
    # 200 steps an epoch, 3 epochs: the exploration switches configurations within the first, and
    # its horizon (600 steps where epochs are shorter) ends with the run's last epoch at the latest.
    args = ("800", "3", "4")
    plain = subprocess.run(
        [sys.executable, str(DIGEST), *args], capture_output=True, text=True, timeout=300
    )
    assert plain.returncode == 0, output_tail(plain)
    done = autotune_run(tmp_path / "results", DIGEST, *args, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, output_tail(done)
    expected = _epoch_digests(plain.stdout)
    assert len(expected) == 3
    assert _epoch_digests(done.stdout) == expected
    (recipe,) = reports_of_every_loader(tmp_path / "results", least=1)
    assert recipe.measured.trials >= 2  # it did switch: the digests cover a change of workers


def _wait_for_line(proc: subprocess.Popen, line: str, timeout: float) -> list[str]:
    """The run's output lines, read by a thread as they come, once `line` is among them (the
    thread goes on reading into the list); fails after `timeout` seconds."""
    seen: list[str] = []
    threading.Thread(
        target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True
    ).start()
    deadline = time.monotonic() + timeout
    while line + "\n" not in seen:
        if time.monotonic() > deadline or proc.poll() is not None:
            pytest.fail(f"no {line!r} within {timeout} s; output so far:\n{''.join(seen)[-3000:]}")
        time.sleep(0.05)
    return seen


@pytest.mark.slow
def test_a_run_killed_mid_exploration_returns_the_signal_code_and_leaves_an_incomplete_recipe(
    tmp_path,
):
    results = tmp_path / "results"
    # 50 ms steps: a measurement window is 8 steps, so exploring the start (after 5 warm-up steps)
    # and one candidate takes 29 steps or more, and step 20 is mid-exploration. 100 steps in all,
    # should the SIGTERM not stop it.
    proc = subprocess.Popen(
        autotune_run_command(results, DIGEST, "400", "1", "50"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )  # its own group, so the cleanup below finds all
    try:
        seen = _wait_for_line(proc, "STEP 20", timeout=120)
        proc.send_signal(
            signal.SIGTERM
        )  # to `autotune run` only, as a scheduler or `kill` sends it
        code = proc.wait(timeout=120)
    finally:
        try:  # whatever is left of the run (a child that outlived `autotune run`)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    out = "".join(seen)
    assert code == 128 + signal.SIGTERM, f"exit code {code}:\n{out[-3000:]}"
    assert online_folders(results), f"no run folder written:\n{out[-3000:]}"
    (recipe,) = reports_of_every_loader(results, least=1)
    assert "incomplete" in recipe.measured.exploration_stop, recipe.measured.exploration_stop
