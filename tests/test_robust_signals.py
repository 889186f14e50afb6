"""The real command under real signals: a worker SIGKILLed mid-burst fails one trial; Ctrl-C
(SIGINT to the process group, as a terminal sends it) and SIGTERM (Slurm's pre-emption) end the
run with the report written and no process left; --resume then finishes the study."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import optuna
import psutil
import pytest
from robust_support import ROOT, alive, autotune_command, cli_env, run_cli, spec

from autotune.search.study import make_storage, open_study, trials_of

# The real CLI with its default bursts (2 s windows): a trial takes a few seconds here.
BUDGET_S = 120
ARGS = ("--device", "cpu", "--max-workers", "2", "--budget", str(BUDGET_S))
WAIT_S = 90  # for the tuner to reach a point the test acts at, on a busy machine
# A whole tuning may use its budget and then write its report: the test waits for both, so a
# slow machine shows as a short study the assertions name, not as a killed command.
RUN_S = BUDGET_S + WAIT_S
POLL_S = 0.05

pytestmark = pytest.mark.slow


def _start(
    tmp_path: Path, *args: str, new_session: bool = False, workload: str = "slow"
) -> subprocess.Popen:
    return subprocess.Popen(
        autotune_command("tune", spec(workload), *ARGS, "--results-dir", str(tmp_path), *args),
        env=cli_env(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )


def _wait_for(condition, what: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert proc.poll() is None, f"tuner exited before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(POLL_S)


def _workers(proc: subprocess.Popen, seen: set[int]) -> list[psutil.Process]:
    try:
        found = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    seen.update(p.pid for p in found)
    return found


def _run_dir(tmp_path: Path) -> Path:
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


def _measured_yet(tmp_path: Path) -> bool:
    """A trial is stored: the runs folder can exist a moment before the run folder inside it."""
    runs = tmp_path / "runs"
    return runs.is_dir() and any(runs.iterdir()) and bool(_stored_trials(_run_dir(tmp_path)))


def _stored_trials(run_dir: Path):
    journal = str(run_dir / "study.journal")
    names = optuna.study.get_all_study_names(make_storage(journal))
    if not names:
        return []
    return trials_of(open_study(seed=0, storage=journal, study_name=names[0]))


def _born_after(proc: subprocess.Popen, seen: set[int], t: float) -> list[psutil.Process]:
    """The tuner's workers started after time `t` (time.time()): a pool that is new, not one
    ending."""
    fresh = []
    for p in _workers(proc, seen):
        try:
            if p.create_time() >= t:
                fresh.append(p)
        except psutil.NoSuchProcess:
            pass
    return fresh


def test_sigkill_of_a_worker_mid_burst_fails_that_trial_only(tmp_path):
    proc = _start(tmp_path, "--trials", "4", workload="sluggish")
    seen: set[int] = set()
    # Trial 0 (no workers) comes after the probes, whose loaders start workers of their own.
    _wait_for(lambda: _measured_yet(tmp_path), "a measured trial", proc)
    # A pool born after that was seen. On a busy machine the test can see trial 0 stored only as
    # the next trial's burst ends, and a worker killed as its pool shuts down fails nothing (the
    # likeliest cause of 2 failures in 3 runs of the #23 checks, whose table named no failed
    # worker). A burst lasts its start-up, warm-up and a 0.5 s window of 50 ms items: 0.1 s after
    # its workers are born is inside it.
    measured_at = time.time()
    _wait_for(lambda: _born_after(proc, seen, measured_at), "a burst with new workers", proc)
    time.sleep(0.1)
    victim = _born_after(proc, seen, measured_at)[0].pid
    os.kill(victim, signal.SIGKILL)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0, err
    table = (_run_dir(tmp_path) / "trials.md").read_text()
    # torch names the worker one of two ways, by which of its checks saw the death first: its
    # SIGCHLD handler ("(pid N) is killed by signal") or the data queue's ("(pid(s) N) exited").
    assert re.search(rf"failed: DataLoader worker \(pid(\(s\))? {victim}\b", table), table
    trials = [t for t in _stored_trials(_run_dir(tmp_path)) if t.phase == "search"]
    assert len(trials) == 4 and sum(t.status == "failed" for t in trials) == 1
    assert alive(seen) == []


def test_ctrl_c_keeps_what_was_measured_and_resume_finishes(tmp_path):
    proc = _start(tmp_path, "--trials", "3", new_session=True)
    seen: set[int] = set()
    _wait_for(lambda: _measured_yet(tmp_path), "a measured trial", proc)
    _wait_for(lambda: _workers(proc, seen), "the next burst with workers", proc)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # the whole foreground group, workers included
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    run_dir = _run_dir(tmp_path)
    assert "interrupted by SIGINT" in err and f"--resume {run_dir}" in err
    assert "Traceback" not in err
    assert "Interrupted by SIGINT" in (run_dir / "trials.md").read_text()
    assert (run_dir / "recipe.json").is_file()
    kept = _stored_trials(run_dir)
    assert 1 <= len(kept) < 3
    assert alive(seen) == []

    resumed = run_cli(
        "tune", spec("slow"), *ARGS, "--trials", "3", "--resume", str(run_dir), timeout=RUN_S
    )
    assert resumed.returncode == 0, resumed.stderr
    final = [t for t in _stored_trials(run_dir) if t.phase == "search"]  # not the re-measurements
    assert len(final) == 3 and len({t.config for t in final}) == 3, resumed.stderr
    assert [(t.config, t.samples_per_s) for t in final[: len(kept)]] == [
        (t.config, t.samples_per_s) for t in kept
    ]
    assert "Interrupted" not in (run_dir / "trials.md").read_text()


def test_sigterm_to_the_tuner_alone_ends_the_burst_and_writes_the_report(tmp_path):
    proc = _start(tmp_path, "--trials", "3")
    seen: set[int] = set()
    _wait_for(lambda: _workers(proc, seen), "a burst with workers", proc)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)  # Slurm signals the job step; here only the main process
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err
    run_dir = _run_dir(tmp_path)
    assert "Interrupted by SIGTERM" in (run_dir / "trials.md").read_text()
    assert alive(seen) == []
