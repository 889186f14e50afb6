import pytest
import torch

from autotune.burst.runner import BurstSettings, run_burst, window_rate
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec, simulated_workload

from conftest import children


def test_sleeping_step_measures_its_known_rate(cpu):
    """A 20 ms step on batches of 16 can do 800 samples/s and nothing else limits it."""
    workload = simulated_workload(SimSpec(cpu_ms=0, io_ms=0, step_ms=20, batch=16, shape=(4,)))
    result = run_burst(workload, LoaderConfig(), cpu,
                       BurstSettings(min_steps=30, min_seconds=1.0, max_seconds=4.0), usable_cpus=2)
    assert 680 <= result.samples_per_s <= 810  # sleep overshoot and a loaded machine cost a little
    shares = result.shares()
    assert shares["wait"] < 5
    assert shares["compute"] > 90
    assert abs(sum(shares.values()) - 100) < 1e-6
    assert result.device_compute_s is None and result.gpu is None  # CPU: unknown, not zero
    assert result.steps >= 30 and result.window_s >= 1.0


def test_loader_bound_rate_and_wait_share(cpu, quick_burst):
    """Items cost 5 ms of CPU in the main process: the loader, not the step, sets the pace."""
    workload = simulated_workload(SimSpec(cpu_ms=5, step_ms=1, batch=8, shape=(4,)))
    result = run_burst(workload, LoaderConfig(), cpu, quick_burst, usable_cpus=2)
    assert result.samples_per_s < 1000 / 5 * 1.1  # at most one item per 5 ms of CPU
    assert result.shares()["wait"] > 70


def test_prefetch_buffer_is_drained_before_timing(cpu):
    """A deep buffer filled during warm-up must not inflate the rate: the loader sustains at most
    one worker's pace (2 ms of CPU per item, 1 worker) however fast the step is."""
    workload = simulated_workload(SimSpec(cpu_ms=2, step_ms=1, batch=4, shape=(4,)))
    config = LoaderConfig(num_workers=1, prefetch_factor=8)
    result = run_burst(workload, config, cpu,
                       BurstSettings(min_steps=10, min_seconds=0.5, max_seconds=3.0, warmup_steps=8),
                       usable_cpus=2)
    assert result.samples_per_s < 500 * 1.15


def test_workers_are_released_after_bursts(cpu, quick_burst):
    workload = simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=4, shape=(4,)))
    for config in (LoaderConfig(num_workers=2, prefetch_factor=2, persistent_workers=True),
                   LoaderConfig(num_workers=3, prefetch_factor=1)):
        result = run_burst(workload, config, cpu, quick_burst, usable_cpus=2)
        assert result.host.peak_workers == config.num_workers
        assert children() == []


def test_memory_figures_are_measured(cpu, quick_burst):
    workload = simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=4, shape=(4,)))
    result = run_burst(workload, LoaderConfig(num_workers=2, prefetch_factor=2), cpu, quick_burst,
                       usable_cpus=2)
    # Forked workers share the parent's pages: summed RSS counts them again, PSS does not.
    assert 0 < result.host.peak_pss_mib <= result.host.peak_rss_mib
    assert result.host.cpu_pct > 0


def test_a_window_that_never_steadies_counts_at_its_slower_reading():
    # 10 steps of 16 samples: the first five slow (0.1 s each), the last five fast (0.02 s each).
    def marks(step_times):
        out = [(0.0, 0)]
        for dt in step_times:
            out.append((out[-1][0] + dt, out[-1][1] + 16))
        return out

    filling = marks([0.1] * 5 + [0.02] * 5)
    # A deep buffer filling, then emptied: the later half (800/s) is the transient; the whole
    # window (160 samples in 0.6 s) is what counts.
    assert window_rate(filling, steady=False) == pytest.approx(160 / 0.6)
    # Not quite drained: the first half was fast, the later half is the truth.
    draining = marks([0.02] * 5 + [0.1] * 5)
    assert window_rate(draining, steady=False) == pytest.approx(80 / 0.5)
    assert window_rate(filling, steady=True) == pytest.approx(160 / 0.6)
