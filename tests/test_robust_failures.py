"""A failing configuration fails one trial, not the run: a dataset raising in a worker, a worker
killed by a signal, a hung worker or step, a full /dev/shm. A workload failing everywhere is
reported as broken, with its traceback."""

from __future__ import annotations

import csv
import threading

import hostile_workloads as hw
import pytest
import torch
from robust_support import TINY_BURST, child_pids

from autotune import tune
from autotune.burst import runner as burst_runner
from autotune.burst.failure import SHM_HINT, describe_failure
from autotune.burst.runner import BurstSettings, run_burst
from autotune.burst.teardown import release_loader as real_release
from autotune.burst.watchdog import BurstTimeout
from autotune.errors import WorkloadError
from autotune.search.trial import TrialStatus
from autotune.space.config import LoaderConfig

# Hangs are declared after 1 s here, to keep the tests that wait for them short.
HANG_BURST = TINY_BURST.model_copy(update={"time_limit_s": 1.0})


def _tune(workload, tmp_path, **options):
    options = {
        "budget_s": 60,
        "max_trials": 4,
        "max_workers": 2,
        "device": "cpu",
        "results_dir": tmp_path,
        "burst": TINY_BURST,
        **options,
    }
    return tune(workload, **options)


def _rows(run_dir):
    with open(run_dir / "trials.csv", newline="") as f:
        return list(csv.DictReader(f))


def _failed(result):
    return [t for t in result.trials if t.status == TrialStatus.FAILED]


def test_dataset_raising_in_workers_fails_those_trials_and_the_search_goes_on(tmp_path):
    before = child_pids()
    # Only the trial cap ends this search: the device ceiling, still probed although the loader
    # probe failed, could otherwise stop it early at w0 (which loads in the main process).
    # Every configuration with workers failed: no num_workers=0 recipe, but one line to act on.
    with pytest.raises(WorkloadError) as caught:
        _tune(hw.raises_in_workers(), tmp_path, early_stop=False)
    message = str(caught.value)
    assert "DataLoader workers" in message and "failed in all" in message and "\n" not in message
    assert "ValueError: hostile item" in message and "(in DataLoader worker" in message
    run_dir = next((tmp_path / "runs").iterdir())
    assert str(run_dir) in message and not (run_dir / "recipe.json").exists()
    rows = _rows(run_dir)
    failed = [r for r in rows if r["status"].startswith("failed: ValueError: hostile item")]
    assert failed and all(r["num_workers"] != "0" for r in failed)
    assert len(rows) >= 4  # all trials ran despite the failures (then re-measurements)
    assert "failed: ValueError: hostile item" in (run_dir / "trials.md").read_text()
    failures = (run_dir / "failures.txt").read_text()
    assert "refuses to load in a worker" in failures and "Original Traceback" in failures
    assert child_pids() <= before


def test_worker_killed_by_sigkill_fails_one_trial(tmp_path):
    before = child_pids()
    # Worker 1 kills itself, as under the OOM killer: only pools of two or more workers fail.
    result = _tune(hw.kills_its_worker(), tmp_path, max_trials=5)
    failed = _failed(result)
    assert failed and all(t.config.num_workers >= 2 for t in failed)
    assert all("DataLoader worker (pid" in t.error for t in failed)
    assert any(t.ok and t.config.num_workers == 1 for t in result.trials)
    assert child_pids() <= before


def test_hung_worker_fails_its_trial_by_the_time_limit(tmp_path, monkeypatch):
    before = child_pids()
    forced: list[bool] = []

    def release(loader, iterator=None, *, force=False):
        forced.append(force)
        real_release(loader, iterator, force=force)

    monkeypatch.setattr(burst_runner, "release_loader", release)
    with pytest.raises(WorkloadError, match="time limit of 1 s.*lower --max-workers"):
        _tune(hw.hangs_in_workers(), tmp_path, max_trials=2, burst=HANG_BURST)
    rows = _rows(next((tmp_path / "runs").iterdir()))
    assert rows[0]["num_workers"] == "0" and not rows[0]["status"].startswith("failed")
    assert rows[1]["num_workers"] != "0"
    assert rows[1]["status"].startswith("failed: burst exceeded its time limit of 1 s")
    # One time limit plus a forced teardown (its workers killed), not the 5 s per hung worker of
    # a graceful shutdown; "not forever" is pytest's timeout. A time asserted here would be the
    # machine's load, not the teardown.
    assert forced.count(True) == sum(r["status"].startswith("failed") for r in rows) >= 1
    assert child_pids() <= before


def test_shared_memory_error_names_dev_shm(tmp_path):
    with pytest.raises(WorkloadError, match="/dev/shm is full or too small"):
        _tune(hw.shm_full(), tmp_path, max_trials=2)


@pytest.mark.parametrize(
    "factory, first_error",
    [
        ("raises_everywhere", "ValueError: hostile item 13 is corrupt"),
        ("ragged", "RuntimeError: stack expects each tensor to be equal size"),
        ("hangs_everywhere", "time limit of 1 s"),
    ],
)
def test_workload_failing_everywhere_stops_early_as_broken(tmp_path, factory, first_error):
    before = child_pids()
    with pytest.raises(WorkloadError) as caught:
        _tune(getattr(hw, factory)(), tmp_path, max_trials=20, burst=HANG_BURST)
    message = str(caught.value)
    assert (
        "is broken: it failed in all 3 configurations tried (PyTorch's defaults included)"
        in message
    )
    assert first_error in message and "\n" not in message
    assert "Traceback (most recent call last)" in caught.value.detail
    run_dir = next((tmp_path / "runs").iterdir())
    assert (run_dir / "trials.md").is_file() and (run_dir / "failures.txt").is_file()
    assert not (run_dir / "recipe.json").exists()
    assert child_pids() <= before


def test_watchdog_stops_a_step_hung_in_the_main_process():
    workload = hw.hangs_everywhere()
    settings = BurstSettings(
        min_steps=2, min_seconds=0.1, max_seconds=0.3, warmup_steps=1, time_limit_s=1.0
    )
    # Stopped at all is the point (a hang would last until pytest's timeout): BurstTimeout comes
    # from the watchdog alone.
    with pytest.raises(BurstTimeout):
        run_burst(workload, LoaderConfig(), torch.device("cpu"), settings)


def test_dataloader_timeout_guards_bursts_off_the_main_thread():
    """Off the main thread there is no SIGALRM watchdog: the DataLoader's own timeout fires."""
    before = child_pids()
    settings = BurstSettings(
        min_steps=2, min_seconds=0.1, max_seconds=0.3, warmup_steps=1, time_limit_s=1.0
    )
    caught: list[BaseException] = []

    def burst() -> None:
        try:
            run_burst(
                hw.hangs_in_workers(), LoaderConfig(num_workers=1), torch.device("cpu"), settings
            )
        except Exception as exc:
            caught.append(exc)

    thread = threading.Thread(target=burst)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive() and caught
    assert describe_failure(caught[0]).startswith("a DataLoader worker delivered no batch in 1")
    assert child_pids() <= before


@pytest.mark.parametrize(
    "message, expected",
    [
        (
            "DataLoader worker (pid 4242) is killed by signal: Killed. ",
            "DataLoader worker (pid 4242) was killed by signal: SIGKILL, as the OOM killer sends:"
            " out of memory?",
        ),
        (
            "DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that"
            " dataloader's workers are out of shared memory. Please try to raise your shared memory"
            " limit.",
            f"DataLoader worker (pid 4242) was killed by signal: {SHM_HINT}",
        ),
        (
            "DataLoader worker (pid(s) 4242, 4243) exited unexpectedly",
            "DataLoader worker (pid 4242, 4243) exited unexpectedly (killed, e.g. out of memory?)",
        ),
        (
            "DataLoader timed out after 30 seconds",
            "a DataLoader worker delivered no batch in 30 s (a hung worker or dataset item)",
        ),
    ],
)
def test_torch_worker_errors_become_one_actionable_line(message, expected):
    assert describe_failure(RuntimeError(message)) == expected


def test_long_multiline_errors_are_cut_to_one_line():
    line = describe_failure(ValueError("first line\n" + "x" * 1000))
    assert "\n" not in line and len(line) <= 240
