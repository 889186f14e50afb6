"""Verdicts on real short bursts of simulated workloads whose bottleneck is known by construction.

The machine may be shared and busy, so each case is built with a wide margin: the known bottleneck
costs several times what the rest of the step does.
"""

import pytest
import torch

from autotune.burst.runner import BurstSettings, run_burst
from autotune.diagnosis import Context, diagnose
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec, simulated_workload

SHORT = BurstSettings(min_steps=8, min_seconds=0.6, max_seconds=1.5, warmup_steps=2)
CPU = torch.device("cpu")


def _verdict(spec: str, config: LoaderConfig):
    result = run_burst(simulated_workload(SimSpec.parse(spec)), config, CPU, SHORT, usable_cpus=2)
    return diagnose(result, Context(usable_cpus=2)), result


def test_cpu_heavy_items_with_a_fast_step_are_input_bound():
    # 16 items x 4 ms of CPU per batch on one worker against a 1 ms step.
    d, _ = _verdict("cpu_ms=4,step_ms=1,batch=16", LoaderConfig(num_workers=1, prefetch_factor=2))
    assert d.bottleneck == "input", d.reason


def test_slow_sleeping_step_with_cheap_items_is_device_bound():
    d, result = _verdict(
        "cpu_ms=0.05,step_ms=40,batch=8", LoaderConfig(num_workers=1, prefetch_factor=2)
    )
    assert d.bottleneck == "device", d.reason
    assert result.device_busy_s is not None
    assert d.verdict.evidence.split.copy_pct is None  # CPU run: no copy, and not shown as 0


def test_main_thread_work_in_the_step_is_host_bound():
    # 25 ms of main-thread CPU per step before a 2 ms emulated device step.
    d, _ = _verdict(
        "cpu_ms=0.05,step_ms=2,host_ms=25,batch=8", LoaderConfig(num_workers=1, prefetch_factor=2)
    )
    assert d.bottleneck == "host", d.reason


def test_loading_in_the_main_process_is_input_bound():
    d, _ = _verdict("cpu_ms=3,step_ms=1,batch=16", LoaderConfig())
    assert d.bottleneck == "input", d.reason


@pytest.mark.parametrize("spec", ["cpu_ms=0.05,step_ms=40,batch=8", "cpu_ms=4,step_ms=1,batch=16"])
def test_split_of_a_real_burst_adds_up(spec):
    d, _ = _verdict(spec, LoaderConfig(num_workers=1, prefetch_factor=2))
    split = d.verdict.evidence.split
    assert split.wait_pct + split.compute_pct + split.other_pct == pytest.approx(100, abs=0.01)
