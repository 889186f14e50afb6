"""Verdict rules on synthetic BurstResults: each bottleneck, its evidence, its advice."""

import pytest
from fakes import burst

from autotune.diagnosis import Context, KnownCeilings, diagnose, explain, split_step
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig

CPU2 = Context(usable_cpus=2, max_workers=8)


def test_split_adds_up_and_copy_is_none_on_cpu():
    split = split_step(burst(wait=0.5, copy=0.01, compute=0.3))
    assert split.copy_pct is None  # no copy to a device on a CPU run: not 0, not the layout time
    assert split.wait_pct + split.compute_pct + split.other_pct == pytest.approx(100)
    assert split.other_pct == pytest.approx(20)  # the copy phase's host time is host work here
    assert split.step_ms == pytest.approx(10)


def test_split_with_cuda_evidence_counts_a_queued_copy_as_compute():
    # 30% of wall time in the copy phase, of which the device spent 10% copying: the rest was a
    # synchronous copy waiting behind the previous step's kernels.
    split = split_step(
        burst(wait=0.1, copy=0.3, compute=0.5, device_copy=0.1, device_compute=0.5, gpu_util=95.0)
    )
    assert split.copy_pct == pytest.approx(10)
    assert split.compute_pct == pytest.approx(70)
    assert sum(split.pcts().values()) == pytest.approx(100)


def test_input_bound_when_waiting_dominates():
    d = diagnose(burst(wait=0.8, compute=0.15), CPU2)
    assert d.bottleneck == "input"
    assert "waits for data 80%" in d.reason


def test_device_bound_when_the_emulated_device_is_busy():
    d = diagnose(burst(wait=0.05, compute=0.9, busy=0.9), CPU2)
    assert d.bottleneck == "device"
    assert d.verdict.evidence.device_busy_pct == pytest.approx(90)


def test_host_bound_when_step_time_is_host_work_not_device_work():
    # The host is in step() 90% of the time but the emulated device is busy only 20%.
    d = diagnose(burst(wait=0.05, compute=0.9, busy=0.2), CPU2)
    assert d.bottleneck == "host"
    assert d.verdict.costs["host"] == pytest.approx(75)


def test_transfer_bound_on_fake_cuda_evidence():
    d = diagnose(
        burst(
            wait=0.05, copy=0.6, compute=0.3, device_copy=0.55, device_compute=0.3, gpu_util=30.0
        ),
        CPU2,
    )
    assert d.bottleneck == "transfer"
    assert d.verdict.evidence.split.copy_pct == pytest.approx(55)


def test_host_bound_on_fake_cuda_evidence_low_gpu_utilization():
    # Kernel-launch overhead: the host sits in step() 85% of the time, the GPU runs kernels 25%.
    d = diagnose(
        burst(
            wait=0.05, copy=0.02, compute=0.85, device_copy=0.02, device_compute=0.8, gpu_util=25.0
        ),
        CPU2,
    )
    assert d.bottleneck == "host"
    assert d.to_record()["evidence"]["gpu_util_pct"] == 25.0


def test_device_bound_on_fake_cuda_evidence_high_gpu_utilization():
    d = diagnose(
        burst(
            wait=0.05, copy=0.02, compute=0.9, device_copy=0.02, device_compute=0.9, gpu_util=97.0
        ),
        CPU2,
    )
    assert d.bottleneck == "device"


def test_a_device_busy_half_the_step_is_held_back_by_its_idling():
    d = diagnose(burst(wait=0.47, compute=0.53, busy=0.53), CPU2)
    assert d.bottleneck == "input" and d.verdict.runner_up == "device" and d.verdict.close_call
    assert "close call: device takes 53%" in d.reason


def test_a_reached_ceiling_decides():
    result = burst(wait=0.45, compute=0.50, busy=0.50, rate=950.0)
    with_device_ceiling = Context(
        usable_cpus=2, ceilings=KnownCeilings(device_samples_per_s=1000.0)
    )
    assert diagnose(result, with_device_ceiling).bottleneck == "device"
    with_loader_ceiling = Context(
        usable_cpus=2, ceilings=KnownCeilings(loader_samples_per_s=1000.0)
    )
    assert diagnose(result, with_loader_ceiling).bottleneck == "input"
    assert (
        KnownCeilings.from_measured({"loader_ceiling_samples_per_s": 1000.0}).loader_samples_per_s
        == 1000.0
    )


def _trial(number, config, rate, result=None):
    return TrialRecord(
        number, config, TrialStatus.OK, result=result or burst(config=config, rate=rate)
    )


def test_input_advice_when_cpu_saturated_cites_workers_cpus_and_ceiling():
    config = LoaderConfig(num_workers=8, prefetch_factor=2)
    result = burst(wait=0.7, compute=0.3, busy=0.3, cpu_pct=97.0, config=config, rate=610.0)
    context = Context(usable_cpus=8, ceilings=KnownCeilings(device_samples_per_s=1000.0))
    d = explain(result, [_trial(0, config, 610.0, result)], context)
    assert d.bottleneck == "input"
    text = d.recommendations[0]
    assert "8 workers on 8 usable CPUs" in text and "CPU-saturated" in text
    assert "61% of the device ceiling" in text and "more workers will not help" in text
    assert d.to_record()["evidence"]["of_device_ceiling_pct"] == 61.0


def test_input_advice_names_other_processes_holding_the_cpus():
    config = LoaderConfig(num_workers=4, prefetch_factor=2)
    result = burst(wait=0.8, compute=0.2, cpu_pct=40.0, system_cpu_pct=98.0, config=config)
    d = explain(result, [_trial(0, config, 100.0, result)], CPU2)
    assert "CPU-saturated" in d.recommendations[0] and "other processes" in d.recommendations[0]


def test_transfer_advice_cites_measured_pin_memory_instead_of_assuming_it():
    off = LoaderConfig(num_workers=4, prefetch_factor=2)
    on = LoaderConfig(num_workers=4, prefetch_factor=2, pin_memory=True)
    result = burst(
        wait=0.05, copy=0.6, compute=0.3, device_copy=0.55, gpu_util=30.0, config=on, rate=900.0
    )
    trials = [_trial(0, off, 1000.0), _trial(1, on, 900.0, result)]
    text = " ".join(explain(result, trials, CPU2).recommendations)
    assert "pin_memory=True measured 10% slower than without it (1 pair of trials)" in text
    assert "non_blocking=True was not measured" in text


def test_device_advice_points_at_fewer_workers_that_reach_the_same_rate():
    configs = [LoaderConfig(num_workers=w, prefetch_factor=2) for w in (2, 6)]
    result = burst(wait=0.02, compute=0.95, busy=0.95, config=configs[1], rate=1000.0)
    trials = [_trial(0, configs[0], 990.0), _trial(1, configs[1], 1000.0, result)]
    recs = explain(result, trials, CPU2).recommendations
    assert "a faster input pipeline will not raise throughput" in recs[0]  # waits 2%
    assert recs[1].startswith("2 workers measured within 3% of this rate")


def test_host_advice_names_launch_overhead_remedies():
    result = burst(wait=0.05, compute=0.9, busy=0.2)
    recs = explain(result, [_trial(0, result.config, 100.0, result)], CPU2).recommendations
    assert "CUDA graphs" in recs[0] and "larger batch" in recs[0]


def test_a_device_idle_most_of_the_step_is_not_device_bound():
    # The device's 43% is the largest single share, but it idles 57%: waiting and host work
    # keep it idle, and the rate is 43% of the target: the CPUs cannot feed it.
    result = burst(wait=0.33, compute=0.67, busy=0.43, rate=645.0)
    d = diagnose(result, Context(usable_cpus=2, target_rate=1500.0))
    assert d.bottleneck == "input"
    assert "the device idles 57% of the step" in d.reason
    assert "43% of the target rate" in d.reason
