"""Probes: their arithmetic on a fake clock with known costs (exact), the prediction on given
numbers, and real probes checked for what they report, never for how fast the machine was."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest
import torch
from timing_fakes import FakeClock, FixedHost, scheduled_workload

from autotune.burst import runner
from autotune.burst.epoch_window import measured_whole
from autotune.burst.runner import BurstSettings
from autotune.probe import device as device_module
from autotune.probe import loader as loader_module
from autotune.probe.ceilings import Ceilings
from autotune.probe.device import DeviceProbe, device_ceiling
from autotune.probe.loader import LoaderProbe
from autotune.probe.run import probe_loader, run_probes
from autotune.search import phases
from autotune.search.seeding import seed_configs
from autotune.search.setup import build_space, probe_batch
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload import accelerator, simulated
from autotune.workload.simulated import SimSpec, simulated_workload

CPU = torch.device("cpu")
FAST = BurstSettings(min_seconds=0.3, min_steps=6, warmup_steps=1)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """Probes, emulated steps and simulated items all on one fake clock."""
    fake = FakeClock().install(
        monkeypatch, device_module, loader_module, runner, accelerator, simulated
    )
    monkeypatch.setattr(simulated, "burn_cpu", fake.burn)
    return fake


def test_device_ceiling_is_the_step_rate_and_leaves_the_cpu_free(clock):
    spec = SimSpec(cpu_ms=0, step_ms=20, batch=16, length=256)
    w = simulated_workload(spec)
    probe = device_ceiling(w, probe_batch(w), CPU, min_seconds=0.3, min_steps=5, warmup_steps=1)
    ideal = spec.batch / (spec.step_ms / 1000)
    assert probe.samples_per_s == pytest.approx(ideal)
    assert probe.steps >= 5 and probe.window_s >= 0.3
    assert probe.host_cores < 0.3  # the emulated accelerator does not use the CPU
    # Main-thread work in the step (Python, kernel launches) is the core it takes from the workers.
    host = SimSpec(cpu_ms=0, step_ms=20, host_ms=5, batch=16, length=256)
    w = simulated_workload(host)
    probe = device_ceiling(w, probe_batch(w), CPU, min_seconds=0.3, min_steps=5, warmup_steps=1)
    assert probe.samples_per_s == pytest.approx(16 / 0.025)
    assert probe.host_cores == pytest.approx(5 / 25)


def test_loader_probe_separates_storage_waits_from_cpu_work(clock, monkeypatch):
    # Workers that wait 12 ms on storage per item: 96 ms a batch of 8, hardly any CPU.
    storage = scheduled_workload(clock, batch_size=8, batch_s=0.096, step=lambda batch: None)
    # The host sampler's first sample takes 26 ms while the workers keep producing: a window
    # timed from after it read 87.2 samples/s here, as it once did on CI.
    monkeypatch.setattr(loader_module, "HostSampler", FixedHost(0.05, clock, start_s=0.026))
    one = probe_loader(storage, 1, FAST, usable_cpus=2)
    four = probe_loader(storage, 4, FAST, usable_cpus=2)
    # The rate batches are produced at, not the rate the start-up fill is emptied at.
    assert one.samples_per_s == pytest.approx(1000 / 12, rel=0.02)  # one item per 12 ms
    assert four.samples_per_s >= 2.5 * one.samples_per_s  # waiting scales past the cores
    assert one.worker_cores < 0.5  # ... because a waiting worker hardly uses its core

    # Items that burn 3 ms of CPU each: one worker is a busy core, 24 ms a batch of 8.
    cpu_bound = scheduled_workload(clock, batch_size=8, batch_s=0.024, step=lambda batch: None)
    monkeypatch.setattr(loader_module, "HostSampler", FixedHost(1.0, clock, start_s=0.026))
    probe = probe_loader(cpu_bound, 1, FAST, usable_cpus=2)
    assert probe.cpu_s_per_sample == pytest.approx(0.003, rel=0.02)
    assert probe.worker_cores == pytest.approx(1.0)  # the main process only receives


def test_real_loader_probes_report_rates_and_cpu():
    """The probes on real workers: what they report, not how fast this machine was."""
    storage = simulated_workload(SimSpec(cpu_ms=0, io_ms=12, batch=8, length=2048))
    one = probe_loader(storage, 1, FAST, usable_cpus=2)
    assert one.workers == 1 and one.samples >= FAST.min_steps * 8 and one.samples_per_s > 0
    assert one.duration_s >= one.window_s >= FAST.min_seconds
    assert one.worker_cores < 0.5  # a worker sleeping on storage: CPU time, not a rate
    cpu_bound = simulated_workload(SimSpec(cpu_ms=3, batch=8, length=2048))
    assert probe_loader(cpu_bound, 1, FAST, usable_cpus=2).cpu_s_per_sample > 0


def _ceilings(
    device_rate: float,
    r1: float,
    worker_cores: float,
    cpus: int = 2,
    step_cores: float = 0.0,
    channels_last_rate: float | None = None,
) -> Ceilings:
    probes = [DeviceProbe(device_rate, False, 10, 1.0, step_cores)]
    if channels_last_rate is not None:
        probes.append(DeviceProbe(channels_last_rate, True, 10, 1.0, step_cores))
    c = Ceilings(tuple(probes), cpus)
    c.add(LoaderProbe(1, r1, 1.0, int(r1), worker_cores + 0.05, 0.05))
    return c


def test_prediction_storage_bound_goes_past_the_cores():
    c = _ceilings(device_rate=800, r1=190, worker_cores=0.05)
    assert c.predicted_workers(max_workers=8) == 5  # ceil(1.1 * 800 / 190)
    assert c.predicted_workers(max_workers=3) == 3


def test_prediction_cpu_bound_stops_where_the_cores_run_out():
    c = _ceilings(device_rate=1600, r1=240, worker_cores=1.0, cpus=2)
    assert c.predicted_workers(max_workers=8) == 3  # two free cores, one spare worker
    # A CPU step (model trained on the CPU) takes a core away from the workers.
    c = _ceilings(device_rate=1600, r1=240, worker_cores=1.0, cpus=4, step_cores=1.0)
    assert c.predicted_workers(max_workers=16) == 4


def test_prediction_uses_the_scaling_seen_at_the_second_probe():
    c = _ceilings(device_rate=800, r1=200, worker_cores=0.1)
    assert c.predicted_workers(8) == 5
    c.add(LoaderProbe(5, 500, 1.0, 500, 0.6, 0.1))  # 100/s per worker at 5, not 200
    assert c.predicted_workers(8) == 8  # ceil(880 * 5 / 500) = 9, capped
    assert c.bound_for(LoaderConfig(num_workers=5)) == 500
    assert c.bound_for(LoaderConfig(num_workers=3)) is None
    # A probe at torch's defaults is no bound on a configuration with other loader knobs.
    assert c.bound_for(LoaderConfig(num_workers=5, persistent_workers=True)) is None
    # Knobs the loader alone never sees (the step's) do not matter, nor an explicit default.
    assert c.bound_for(LoaderConfig(num_workers=5, prefetch_factor=2, channels_last=True)) == 500


def test_the_loader_ceiling_at_the_chosen_knobs_bounds_a_persistent_pool(clock, monkeypatch):
    # Epochs of 5 batches, each worker start costs 0.5 s: restarted every epoch without
    # persistent workers, once with them. The ceiling probed at torch's defaults paid the restarts,
    # so a persistent configuration read far above it (231% of it on the bench's tiny-epochs).
    monkeypatch.setattr(loader_module, "HostSampler", FixedHost(0.05, clock))
    w = scheduled_workload(
        clock, batch_size=8, batch_s=0.02, step=lambda b: None, epoch_batches=5, restart_s=0.5
    )
    chosen = LoaderConfig(num_workers=1, prefetch_factor=2, persistent_workers=True)
    c = Ceilings((_device_probe(False, rate=10_000.0),), usable_cpus=2)
    c.add(probe_loader(w, 1, FAST, usable_cpus=2))
    c.add(probe_loader(w, chosen, FAST, usable_cpus=2), chosen)
    restarting, persistent = c.loader[1].samples_per_s, c.loader_for(chosen)
    assert persistent == pytest.approx(8 / 0.02, rel=0.02)  # a batch every 20 ms, no restart
    assert restarting is not None and restarting < persistent / 3
    assert c.bound_for(chosen) == persistent  # the device allows more: the loader bounds it
    assert c.loader[1] is not c.loader_probe_for(chosen)  # the worker model keeps its own
    assert c.as_dict()["loader_samples_per_s_by_config"] == {
        "w1 pf2": pytest.approx(restarting, abs=0.01),
        "w1 pf2 persist": pytest.approx(persistent, abs=0.01),
    }


def test_slow_step_needs_one_worker():
    assert _ceilings(device_rate=200, r1=800, worker_cores=1.0).predicted_workers(8) == 1


def test_seeds_surround_the_prediction_with_the_faster_layout():
    space = SearchSpace(max_workers=8, cuda=False, channels_last_ok=True)
    seeds = seed_configs(_ceilings(800, 190, 0.05, channels_last_rate=1000), space)
    # the faster layout's 1000/s is the ceiling
    assert [(s.num_workers, s.prefetch_factor) for s in seeds] == [(5, 2), (6, 2), (7, 2), (6, 8)]
    assert all(s.channels_last and not s.pin_memory for s in seeds)
    # A layout within probe noise of the default is not worth converting every batch for.
    assert not any(s.channels_last for s in seed_configs(_ceilings(800, 190, 0.05, 810), space))
    cuda = SearchSpace(max_workers=8, cuda=True, channels_last_ok=False)
    seeds = seed_configs(_ceilings(200, 800, 1.0), cuda)
    # A worker that computes rather than waits: no deep-prefetch seed.
    assert [(s.num_workers, s.prefetch_factor) for s in seeds] == [(1, 2), (2, 2)]
    assert all(s.pin_memory and s.non_blocking and not s.channels_last for s in seeds)
    for s in seeds:
        assert not cuda.problems(s)


def test_seeds_whose_bursts_time_whole_epochs_run_at_the_shallowest_prefetch():
    space = SearchSpace(max_workers=8, cuda=False, channels_last_ok=False)
    ceilings = _ceilings(800, 190, 0.05)
    # 12-batch epochs, bursts of at least 8 steps: a pool 10 batches deep or more leaves no
    # window in an epoch's middle (burst/epoch_window.py), so its burst times whole epochs
    seeds = seed_configs(ceilings, space, lambda c: measured_whole(12, c.prefetch_depth, 8))
    assert [(s.num_workers, s.prefetch_factor) for s in seeds] == [(4, 1), (5, 1), (6, 1), (5, 8)]
    # long epochs: torch's default, as before
    seeds = seed_configs(ceilings, space, lambda c: measured_whole(10_000, c.prefetch_depth, 8))
    assert [(s.num_workers, s.prefetch_factor) for s in seeds] == [(4, 2), (5, 2), (6, 2), (5, 8)]
    assert measured_whole(12, 8, 8) and not measured_whole(40, 8, 8)
    assert not measured_whole(None, 64, 8)  # no length: nothing whole to time


@pytest.mark.slow
def test_run_probes_on_a_storage_workload_predicts_more_workers_than_one():
    w = simulated_workload(SimSpec(cpu_ms=0, io_ms=5, step_ms=20, batch=16, length=2048))
    batch = probe_batch(w)
    space = build_space(batch, CPU, 8)
    ceilings = run_probes(w, batch, CPU, space, usable_cpus=2, settings=FAST)
    assert 1 in ceilings.loader and len(ceilings.loader) == 2  # 1 worker, then the prediction
    # One worker delivers at most 200/s against a step eating 800/s: a 4x margin, so more than
    # one whatever the noise (the count itself follows from rates: see the prediction tests).
    assert ceilings.predicted_workers(8) > 1
    assert len(ceilings.device_probes) == 2  # 4-D float batches: both layouts timed


def _device_probe(cl: bool, rate: float = 1000.0, warmup_s: float = 0.0) -> DeviceProbe:
    return DeviceProbe(
        samples_per_s=rate,
        channels_last=cl,
        steps=10,
        window_s=1.0,
        host_cores=0.1,
        warmup_s=warmup_s,
    )


def test_each_probe_has_its_own_time_limit_and_a_failed_loader_probe_keeps_the_device_ceiling(
    monkeypatch,
):
    """A cold GPU's first steps (cuDNN loading and autotuning: 15-20 s per layout on an H100) used
    to run under one limit for all probes; past it every ceiling was lost."""
    import contextlib

    from autotune.probe import run as run_module

    limits: list[tuple[str, float | None]] = []  # each watchdog armed: what it guards, its limit

    @contextlib.contextmanager
    def fake_limit(seconds, what="burst"):
        limits.append((what, seconds))
        yield

    def device(workload, batch, device, *, min_seconds, min_steps, warmup_steps, channels_last):
        return _device_probe(channels_last, warmup_s=0.5)

    def failing_loader(*args, **kwargs):
        raise RuntimeError("a worker died")

    monkeypatch.setattr(run_module, "time_limit", fake_limit)
    monkeypatch.setattr(run_module, "device_ceiling", device)
    monkeypatch.setattr(run_module, "loader_rate", failing_loader)
    space = SearchSpace(max_workers=8, cuda=False, channels_last_ok=True)
    heard: list[float] = []
    ceilings = run_probes(
        None, None, CPU, space, usable_cpus=2, limit_s=1.0, warmed_up=heard.append
    )
    assert limits == [
        ("the device probe", 1.0),
        ("the device probe (channels_last)", 1.0),
        ("the fetch probe", 1.0),
        ("the loader probe at 1 worker", 1.0),
    ]
    assert ceilings.fetched is None  # no dataset to fetch from (workload None): the probes go on
    assert [p.channels_last for p in ceilings.device_probes] == [False, True]
    assert ceilings.loader == {}  # the loader probe failed; the device ceiling is kept
    assert ceilings.warmup_s == pytest.approx(1.0) and heard == [pytest.approx(1.0)]


def test_budget_leaves_the_devices_one_time_warm_up_out():
    from autotune.search.budget import Budget

    now = [0.0]
    budget = Budget(60.0, clock=lambda: now[0])
    now[0] = 40.0
    assert budget.time_left() == pytest.approx(20.0)
    budget.exclude(31.0)
    budget.exclude(-5.0)  # never a negative warm-up
    assert budget.time_left() == pytest.approx(51.0)
    assert budget.elapsed() == pytest.approx(40.0)  # tuning_s still reports the wall clock


def test_cuda_seeds_try_channels_last_where_the_probe_saw_the_layouts_level():
    """On an H100 a probe saw ResNet-50's layouts level while the pipeline ran 31% faster with
    channels_last: on CUDA the prediction is also seeded with it (on the CPU it is not)."""
    ceilings = Ceilings((_device_probe(False, 1915), _device_probe(True, 1911)), 16)
    ceilings.add(LoaderProbe(1, 150, 1.0, 150, 2.0, 1.0))  # a worker computing on a core
    cuda = SearchSpace(max_workers=32, cuda=True, channels_last_ok=True)
    seeds = seed_configs(ceilings, cuda)
    assert [s.channels_last for s in seeds] == [False, False, False, True]
    assert seeds[-1].num_workers == seeds[1].num_workers and seeds[-1].pin_memory
    cpu = SearchSpace(max_workers=32, cuda=False, channels_last_ok=True)
    assert not any(s.channels_last for s in seed_configs(ceilings, cpu))


def test_the_ceiling_at_the_choice_is_probed_over_a_trial_s_window_and_its_pool_s_depth(
    monkeypatch,
):
    seen = []

    def fake_probe(workload, config, settings, cpus, limit_s=None):
        seen.append((config, settings))
        return LoaderProbe(config.num_workers, 600.0, 1.0, 600, 0.2, 0.05)

    monkeypatch.setattr(phases, "probe_loader", fake_probe)
    runner = SimpleNamespace(
        stop=SimpleNamespace(requested=False, interruptible=nullcontext),
        budget=SimpleNamespace(fits=lambda _s: True),
        bursts=SimpleNamespace(
            workload=None, cpus=2, options=SimpleNamespace(min_seconds=0.5, time_limit=None)
        ),
    )
    c = Ceilings((_device_probe(False, rate=10_000.0),), usable_cpus=2)
    chosen = LoaderConfig(num_workers=11, prefetch_factor=2)
    phases.loader_ceiling_at(runner, c, chosen)
    ((config, settings),) = seen
    assert config == chosen and c.loader_for(chosen) == 600.0
    assert settings.min_seconds == 0.5  # the trials' window, not the probes' 0.3 s
    assert settings.min_steps == 2 * 11 * 2  # two rounds of the 22 batches in flight
    phases.loader_ceiling_at(runner, c, chosen)
    assert len(seen) == 1  # probed once
