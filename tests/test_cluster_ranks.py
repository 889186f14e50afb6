"""--ranks-per-node K on CPU: K ranks (torch.distributed, gloo) load at once; the slowest one
scores."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from autotune.api import tune
from autotune.burst.ranks import backend_for, slowest, spec_factory
from autotune.burst.result import BurstResult
from autotune.errors import OptionsError, WorkloadError
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.telemetry.host import HostStats
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

SLOW_STEP_S = 0.05  # rank 1's step; rank 0's is 25x shorter

FACTORIES = f"""
import os
from autotune.workload.simulated import SimSpec, simulated_workload

def rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))

def uneven():
    step_ms = 2 if rank() == 0 else {SLOW_STEP_S * 1000}
    # Long enough that rank 0 never restarts its workers at an epoch end within a burst.
    return simulated_workload(SimSpec(cpu_ms=0, step_ms=step_ms, batch=8, length=8192))

def broken_on_rank_1():
    if rank() == 1:
        raise RuntimeError("no data on this rank")
    return simulated_workload(SimSpec(cpu_ms=0, step_ms=2, batch=8, length=256))
"""

QUICK = dict(min_steps=4, min_seconds=0.3, max_seconds=0.8, warmup_steps=1)


@pytest.fixture
def factories(tmp_path: Path) -> Path:
    path = tmp_path / "rank_workloads.py"
    path.write_text(FACTORIES)
    return path


def run(spec: str, **options):
    opts = WorkloadOptions(device="cpu")
    return tune(
        load_workload(spec, opts),
        workload_factory=spec_factory(spec, opts),
        ranks_per_node=2,
        device="cpu",
        results_dir=None,
        burst=QUICK,
        **options,
    )


def test_two_ranks_score_each_configuration_by_the_slowest(factories):
    result = run(f"{factories}:uneven", max_trials=2, budget_s=120)
    measured = [t for t in result.trials if t.ok]
    assert measured, [t.error for t in result.trials]
    for trial in measured:
        # Only rank 1 steps this slowly (a sleep never returns early): its burst is the one the
        # trial kept. Its rate is not bounded here: a window is credited with batches left ready.
        assert trial.result.step_s >= SLOW_STEP_S
        assert trial.samples_per_s > 0
    env = result.recipe.environment
    assert env["ranks_per_node"] == 2 and "--ranks-per-node" in env["cpu_budget"]


def test_a_failure_on_another_rank_fails_the_configuration(factories):
    with pytest.raises(WorkloadError, match="rank 1: building the workload failed"):
        run(f"{factories}:broken_on_rank_1", max_trials=1, budget_s=60)


def test_more_ranks_need_a_factory():
    work = load_workload("sim:cpu_ms=0,step_ms=1", WorkloadOptions(device="cpu"))
    with pytest.raises(OptionsError, match="workload_factory"):
        tune(work, ranks_per_node=2, results_dir=None, device="cpu")


def _result(rate: float) -> BurstResult:
    host = HostStats(
        cpu_pct=0.0, cpu_cores_used=0.0, peak_rss_mib=0.0, peak_pss_mib=0.0, peak_workers=0
    )
    return BurstResult(
        PYTORCH_DEFAULTS,
        rate,
        10,
        80,
        1.0,
        0.1,
        0.1,
        1.2,
        True,
        0.0,
        0.0,
        0.0,
        None,
        None,
        host,
        None,
    )


def test_slowest_picks_the_lowest_rate_and_cpu_ranks_use_gloo():
    results = [_result(300.0), _result(120.0), replace(_result(250.0), steady=False)]
    assert slowest(results).samples_per_s == 120.0
    assert backend_for(torch.device("cpu")) == "gloo"
