"""Epoch-aware scoring: what an epoch boundary costs, the rate over whole epochs, the burst's
persistent refill, the simulated start-up cost and the advice on persistent_workers."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace

import optuna
import pytest
from fakes import burst
from timing_fakes import FakeClock
from torch.utils.data import DataLoader, IterableDataset

import autotune.burst.pacing as pacing_module
import autotune.workload.simulated as simulated_module
from autotune.burst.epoch import (
    EpochLength,
    epoch_cost,
    epoch_length,
    epoch_rate,
    restart_cost_s,
    steady_rate,
)
from autotune.burst.pacing import refill_s
from autotune.burst.runner import with_epochs
from autotune.diagnosis.epochs import depth_advice, epoch_advice, of_burst
from autotune.errors import WorkloadError
from autotune.recipe.build import measured_block
from autotune.search.ledger import StudyLedger
from autotune.search.phases import Queue, persistent_twin
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.simulated import SimSpec, SimulatedDataset

NP = LoaderConfig(num_workers=4, prefetch_factor=2)
PERSIST = replace(NP, persistent_workers=True)


def test_an_epoch_boundary_costs_its_first_batch_minus_one_steady_step():
    assert restart_cost_s(1.016, 1000.0, 16) == pytest.approx(1.0)
    assert restart_cost_s(0.010, 1000.0, 16) == 0.0  # faster than a step: nothing lost
    assert restart_cost_s(1.0, 0.0, 16) == 0.0


def test_the_epoch_rate_adds_one_restart_per_epoch():
    # 4000 samples at 1000/s steady take 4 s; one restart of 1 s makes it 5 s an epoch.
    assert epoch_rate(1000.0, EpochLength(250, 4000), 1.0) == pytest.approx(800.0)
    # Unknown length: no boundary is counted (the report states the assumption).
    assert epoch_rate(1000.0, EpochLength(None, None), 1.0) == 1000.0


def test_a_window_that_crossed_a_boundary_has_it_taken_out_before_it_is_added_back():
    # 2 s window at 800/s holding one 0.4 s restart: steady 800 x 2 / 1.6 = 1000/s.
    assert steady_rate(800.0, 2.0, 1, 0.4) == pytest.approx(1000.0)
    assert steady_rate(800.0, 2.0, 0, 0.4) == 800.0
    cost = epoch_cost(800.0, 2.0, 1, 0.416, 16, EpochLength(250, 4000))
    assert cost.steady_samples_per_s > 800.0
    assert cost.samples_per_s == pytest.approx(
        4000 / (4000 / cost.steady_samples_per_s + cost.restart_cost_s)
    )


def test_epoch_length_is_the_loaders_batches_and_at_most_the_datasets_items():
    assert epoch_length(DataLoader(list(range(100)), batch_size=16), 16) == EpochLength(7, 100)
    dropped = DataLoader(list(range(100)), batch_size=16, drop_last=True)
    assert epoch_length(dropped, 16) == EpochLength(6, 96)

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(10))

    unknown = epoch_length(DataLoader(Stream(), batch_size=4), 4)
    assert unknown == EpochLength(None, None) and not unknown.known


def test_the_recorded_rate_is_over_whole_epochs_and_keeps_the_steady_one():
    window = burst(window=1.0, steps=100, rate=1600.0, config=NP)  # 16 samples a step
    result = with_epochs(window, 2.01, EpochLength(300, 4800))
    assert result.steady_samples_per_s == 1600.0
    assert result.restart_cost_s == pytest.approx(2.0)
    assert result.samples_per_s == pytest.approx(4800 / (3.0 + 2.0))
    assert result.restart_share == pytest.approx(0.4)
    m = measured_block(result, None)
    assert m.restart_cost_s == 2.0 and m.epoch_samples == 4800 and m.restart_share_pct == 40.0
    assert "2.00 s restart cost per epoch (40.0% of the epoch" in m.epoch_note()
    unknown = measured_block(with_epochs(window, 2.01, EpochLength(None, None)), None)
    assert unknown.samples_per_s == 1600.0 and "no length" in unknown.epoch_note()


class _Queue:
    def __init__(self, clock: FakeClock, done_at: float):
        self.clock, self.done_at = clock, done_at

    def qsize(self) -> int:  # the two tasks in flight are queued once done
        return 2 if self.clock.now >= self.done_at else 0


class _PersistentLoader:
    """A persistent loader whose two tasks in flight finish at `done_at`; a new epoch's first
    batch then takes `first_s`."""

    persistent_workers, num_workers = True, 2

    def __init__(self, clock: FakeClock, done_at: float, first_s: float):
        queue = _Queue(clock, done_at)
        self._iterator = type(
            "It",
            (),
            {
                "_task_info": {},
                "_data_queue": queue,
                "_worker_result_queue": queue,
                "_tasks_outstanding": 2,
            },
        )()
        self.clock, self.first_s, self.started = clock, first_s, None

    def __iter__(self):
        self.started = self.clock.now
        self.clock.sleep(self.first_s)
        yield "batch"


def test_a_persistent_refill_starts_from_idle_workers_and_times_the_first_batch(monkeypatch):
    clock = FakeClock().install(monkeypatch, pacing_module)
    loader = _PersistentLoader(clock, done_at=0.3, first_s=0.05)
    assert refill_s(loader, limit_s=1.0) == pytest.approx(0.05)
    assert loader.started >= 0.3  # the tasks in flight finished first, as at a real epoch end
    late = _PersistentLoader(
        FakeClock().install(monkeypatch, pacing_module), done_at=9.0, first_s=0.05
    )
    refill_s(late, limit_s=1.0)
    assert late.started == pytest.approx(1.0, abs=0.01)  # waited no longer than the limit


def test_the_simulated_start_up_is_paid_once_per_process_and_stragglers_wait_longer(monkeypatch):
    clock = FakeClock().install(monkeypatch, simulated_module)
    data = SimulatedDataset(100, 0.0, 1.0, (1,), open_ms=2000, straggle_every=40, straggle_x=10)
    data[0]
    assert clock.now == pytest.approx(2.001)
    data[1]
    assert clock.now == pytest.approx(2.002)  # opened already in this process
    data._opened_in = -1  # a forked worker: a process that has not opened the files
    data[2]
    assert clock.now == pytest.approx(4.003)
    assert data.io_seconds(39) == pytest.approx(0.010) and data.io_seconds(40) == pytest.approx(
        0.001
    )


def test_sim_spec_takes_the_epoch_parameters_and_names_a_bad_one():
    spec = SimSpec.parse("io_ms=1,length=600,open_ms=2000,straggle_every=40,straggle_x=8")
    assert (spec.length, spec.open_ms, spec.straggle_every, spec.straggle_x) == (
        600,
        2000.0,
        40,
        8.0,
    )
    assert spec.extras() == {"open_ms": 2000.0, "straggle_every": 40, "straggle_x": 8.0}
    with pytest.raises(WorkloadError, match="straggle_x >= 1"):
        SimSpec.parse("straggle_x=0.5")
    with pytest.raises(WorkloadError, match="bad value for sim parameter straggle_every"):
        SimSpec.parse("straggle_every=1.5")


def _with_restart(config: LoaderConfig, rate: float, cost: float) -> TrialRecord:
    result = with_epochs(
        burst(window=1.0, steps=100, rate=1600.0, config=config),
        cost + 0.01,
        EpochLength(300, 4800),
    )
    return TrialRecord(0, config, TrialStatus.OK, result=replace(result, samples_per_s=rate))


def test_advice_says_persistent_workers_matter_with_the_measured_saving():
    slow, fast = _with_restart(NP, 960.0, 2.0), _with_restart(PERSIST, 1580.0, 0.04)
    [line] = epoch_advice(fast.result, [slow, fast])
    assert line.startswith("persistent_workers matters here") and "65% faster" in line
    [line] = epoch_advice(slow.result, [slow])  # not measured against it, but a 40% restart
    assert line.startswith("persistent_workers matters here") and "use persistent_workers" in line


def test_advice_says_when_persistent_workers_do_not_matter_and_nothing_without_workers():
    cheap = _with_restart(NP, 1590.0, 0.02)
    [line] = epoch_advice(cheap.result, [cheap])
    assert line.startswith("persistent_workers does not matter here")
    w0 = LoaderConfig()
    assert epoch_advice(burst(config=w0), []) == []


def _short_epochs(config: LoaderConfig, rate: float, crossed: int = 3) -> TrialRecord:
    result = replace(_with_restart(config, rate, 0.05).result, window_epochs=crossed)
    return TrialRecord(0, config, TrialStatus.OK, result=result)


def test_advice_names_the_prefetch_depth_against_the_others_where_the_window_crossed_epochs():
    shallow = LoaderConfig(num_workers=4, prefetch_factor=1, persistent_workers=True)
    deep = replace(shallow, prefetch_factor=2)
    other = replace(shallow, num_workers=6)  # another worker count: not compared
    trials = [
        _short_epochs(shallow, 1550.0),
        _short_epochs(deep, 1500.0),
        _short_epochs(deep, 1480.0),
        _short_epochs(other, 1700.0),
    ]
    [line] = depth_advice(of_burst(trials[0].result), trials)
    assert line == (
        "prefetch_factor: each 300-step epoch refills the pool (4 workers x 1 batches sent at"
        " once); with the other settings alike, prefetch_factor=1 beat 2 (1550 against 1490"
        " samples/s over whole epochs)"
    )
    # a window inside one epoch, no other depth measured, or no workers: no line
    assert depth_advice(of_burst(_short_epochs(shallow, 1550.0, crossed=0).result), trials) == []
    assert depth_advice(of_burst(trials[3].result), trials) == []
    assert depth_advice(of_burst(burst(config=LoaderConfig())), []) == []


def test_a_costly_restart_of_the_best_so_far_has_its_persistent_twin_measured_next():
    costly = _with_restart(NP, 960.0, 2.0)
    assert persistent_twin([costly]) == PERSIST
    cheap = _with_restart(NP, 1590.0, 0.0)
    assert persistent_twin([cheap]) is None  # restarts cost nothing: no twin
    six = LoaderConfig(num_workers=6, prefetch_factor=2)
    better = _with_restart(six, 2000.0, 0.0)
    better.result = replace(better.burst, steady_samples_per_s=2000.0)
    # Not the best at persistent_workers=True either: the sampler decides.
    assert persistent_twin([costly, better]) is None
    already = _with_restart(PERSIST, 1580.0, 2.0)
    assert persistent_twin([already]) is None
    assert persistent_twin([costly, already]) is None  # its twin measured: it stands for it


def test_a_twin_put_first_is_measured_before_the_remaining_seeds():
    study = optuna.create_study()
    space = SearchSpace(max_workers=8, cuda=False, channels_last_ok=False)
    seeds = [LoaderConfig(), NP, replace(NP, num_workers=5)]
    queue = Queue(StudyLedger(study, nullcontext()), lambda: space, seeds)

    def next_config() -> LoaderConfig:
        queue.feed()
        return space.suggest(study.ask())

    assert next_config() == LoaderConfig()
    assert next_config() == NP
    queue.first([PERSIST])
    assert next_config() == PERSIST
    assert next_config() == replace(NP, num_workers=5)
