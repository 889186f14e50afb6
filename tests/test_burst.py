import subprocess
import sys

import pytest
from conftest import children
from timing_fakes import FakeClock, scheduled_workload

from autotune.burst import runner
from autotune.burst.runner import BurstSettings, run_burst
from autotune.space.config import LoaderConfig
from autotune.telemetry import phases
from autotune.telemetry.host import HostSampler
from autotune.workload import accelerator, simulated
from autotune.workload.simulated import SimSpec, simulated_workload


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """The burst's window, its phase timers, emulated steps and simulated items on one fake clock:
    the rate follows from the costs a test gives (real bursts only show what the machine did)."""
    fake = FakeClock().install(monkeypatch, runner, phases, accelerator, simulated)
    monkeypatch.setattr(simulated, "burn_cpu", fake.burn)
    return fake


def test_sleeping_step_measures_its_known_rate(cpu, clock):
    """A 20 ms step on batches of 16 can do 800 samples/s and nothing else limits it."""
    workload = simulated_workload(SimSpec(cpu_ms=0, io_ms=0, step_ms=20, batch=16, shape=(4,)))
    result = run_burst(
        workload,
        LoaderConfig(),
        cpu,
        BurstSettings(min_steps=30, min_seconds=1.0, max_seconds=4.0),
        usable_cpus=2,
    )
    assert result.samples_per_s == pytest.approx(800)
    shares = result.shares()
    assert shares["wait"] < 5
    assert shares["compute"] > 90
    assert abs(sum(shares.values()) - 100) < 1e-6
    assert result.device_compute_s is None and result.gpu is None  # CPU: unknown, not zero
    assert result.steps >= 30 and result.window_s >= 1.0


def test_loader_bound_rate_and_wait_share(cpu, quick_burst, clock):
    """Items cost 5 ms of CPU in the main process: the loader, not the step, sets the pace."""
    workload = simulated_workload(SimSpec(cpu_ms=5, step_ms=1, batch=8, shape=(4,)))
    result = run_burst(workload, LoaderConfig(), cpu, quick_burst, usable_cpus=2)
    assert result.samples_per_s == pytest.approx(8 / (8 * 0.005 + 0.001))  # loading, then the step
    assert result.samples_per_s < 1000 / 5 * 1.1  # at most one item per 5 ms of CPU
    assert result.shares()["wait"] > 70


def test_prefetch_buffer_is_drained_before_timing(cpu, clock):
    """A deep buffer filled during warm-up must not inflate the rate: the loader sustains at most
    one worker's pace (2 ms of CPU per item, 1 worker) however fast the step is."""
    steps = []

    def step(batch):  # the first step is slow (allocator, autotuning): the worker fills its buffer
        clock.sleep(0.1 if not steps else 0.001)
        steps.append(clock.now)

    workload = scheduled_workload(clock, batch_size=4, batch_s=4 * 0.002, step=step)
    config = LoaderConfig(num_workers=1, prefetch_factor=8)
    result = run_burst(
        workload,
        config,
        cpu,
        BurstSettings(min_steps=10, min_seconds=0.5, max_seconds=3.0, warmup_steps=8),
        usable_cpus=2,
    )
    # The loader's pace to within one batch of the window (a buffer counted in would add 5%).
    assert result.samples_per_s == pytest.approx(500, rel=0.02)
    assert result.samples_per_s < 500 * 1.15


def test_workers_are_released_after_bursts(cpu, quick_burst):
    workload = simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=4, shape=(4,)))
    for config in (
        LoaderConfig(num_workers=2, prefetch_factor=2, persistent_workers=True),
        LoaderConfig(num_workers=3, prefetch_factor=1),
    ):
        result = run_burst(workload, config, cpu, quick_burst, usable_cpus=2)
        assert result.host.peak_workers == config.num_workers
        assert children() == []


def test_multiprocessing_helpers_are_not_counted_as_workers():
    # A resource tracker, started by the first spawn of the process (a rank group), outlives it:
    # counted, it made a 2-worker burst report 3 workers and split memory over the wrong count.
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    helper = subprocess.Popen(sleep + ["from multiprocessing.resource_tracker import main"])
    worker = subprocess.Popen(sleep)
    try:
        sampler = HostSampler(usable_cpus=2)
        sampler.sample()
        assert sampler.peak_workers == 1
    finally:
        for proc in (helper, worker):
            proc.kill()
            proc.wait()


def test_memory_figures_are_measured(cpu, quick_burst):
    workload = simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=4, shape=(4,)))
    result = run_burst(
        workload, LoaderConfig(num_workers=2, prefetch_factor=2), cpu, quick_burst, usable_cpus=2
    )
    # Forked workers share the parent's pages: summed RSS counts them again, PSS does not.
    assert 0 < result.host.peak_pss_mib <= result.host.peak_rss_mib
    assert result.host.cpu_pct > 0
