"""The host-RAM budget: configurations whose measured PSS exceeds it are rejected and shown so."""

from __future__ import annotations

import time

import pytest
import torch
from search_fakes import burst, cfg
from torch.utils.data import Dataset, get_worker_info

from autotune import environment
from autotune.api import nothing_ran_error, tune
from autotune.burst.runner import run_burst
from autotune.report.table import rows
from autotune.search.guard import MemoryGuard
from autotune.search.result import TuneResult
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload
from autotune.workload.simulated import SleepStep

# The budget below leaves BALLAST_MIB / 2 of headroom over the main process alone: the main
# process grows during a tuning (probes, lazily imported modules), and at 128 MiB of ballast that
# growth now and then got PyTorch's defaults themselves skipped, so that nothing ran at all.
BALLAST_MIB = 512


class WorkerBallast(Dataset):
    """Each worker process holds BALLAST_MIB of private, touched memory; the main process none.
    Items wait 2 ms (storage latency), so that workers would pay off."""

    def __init__(self) -> None:
        self.ballast: bytes | None = None

    def __len__(self) -> int:
        return 4096

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if self.ballast is None and get_worker_info() is not None:
            self.ballast = b"\x01" * (BALLAST_MIB * 1024 * 1024)
        time.sleep(0.002)
        return torch.zeros(8), index % 2


def test_measured_rejection_uses_pss():
    guard = MemoryGuard(budget_mib=400, batch_mib=1.0)
    assert guard.rejection(burst(cfg(2), 100, pss_mib=300)) is None
    message = guard.rejection(burst(cfg(2), 100, pss_mib=500))
    assert message == "measured peak PSS 500 MiB, over the RAM budget of 400 MiB"


@pytest.mark.slow
def test_configurations_over_the_budget_are_rejected_and_shown(quick_burst):
    workload = Workload(WorkerBallast(), 16, SleepStep(0.004), name="ballast", device="cpu")
    environment.collect()  # the tuner's first act; its imports alone add ~100 MiB to the process
    alone = run_burst(workload, LoaderConfig(), torch.device("cpu"), quick_burst).host.peak_pss_mib
    budget = alone + BALLAST_MIB / 2  # room for the main process alone, not for any worker
    # A budget that the probes alone cannot use up on a loaded machine (15 s once left no trial at
    # all): the trial cap, not the clock, ends the search.
    result = tune(
        workload, budget_s=60, max_trials=4, max_workers=2, ram_budget_mib=budget, results_dir=None
    )
    rejected = [t for t in result.trials if t.status == TrialStatus.REJECTED]
    # The first pool measured carries the ballast over the budget; once the guard has seen what a
    # worker costs, it skips further pools before they run.
    assert rejected, "every configuration with a worker carries the ballast"
    assert all(t.config.num_workers > 0 and t.result.host.peak_pss_mib > budget for t in rejected)
    assert all(t.config.num_workers > 0 for t in result.trials if t.status == TrialStatus.SKIPPED)
    assert result.config.num_workers == 0
    assert result.recipe.measured.rejected == len(rejected)
    table = {r["trial"]: r["status"] for r in rows(result.trials, result.best, result.baseline)}
    assert all(table[t.number].startswith("rejected: measured peak PSS") for t in rejected)


def test_a_tuning_where_nothing_could_run_says_why_in_one_line():
    workload = Workload(WorkerBallast(), 16, SleepStep(0.004), name="ballast", device="cpu")
    skipped = [
        TrialRecord(
            0,
            LoaderConfig(),
            TrialStatus.SKIPPED,
            error="needs ~900 MiB of RAM (the tuning process alone), over the budget of 800 MiB",
        )
    ]
    result = TuneResult(None, skipped, None, None, workload, torch.device("cpu"), 1.0, None)
    error = nothing_ran_error(result)
    assert str(error) == (
        "workload 'ballast': no configuration could run, each was skipped before"
        " it started; first: needs ~900 MiB of RAM (the tuning process alone),"
        " over the budget of 800 MiB"
    )
    assert (
        nothing_ran_error(
            TuneResult(None, [], None, None, workload, torch.device("cpu"), 1.0, None)
        )
        is None
    )
