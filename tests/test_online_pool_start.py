"""A run that starts with workers (a script that sets num_workers): the starved pool's own rate
and its workers' CPU (online/pool_cpu.py) predict the worker count, as the main process's fetch
does at num_workers=0 (online/predict.py); the climb jumps to it. Simulated clocks and fake
readings, except the one test that reads a real pool's workers."""

import time

import pytest
import torch

from autotune.online.climb_types import ClimbSettings
from autotune.online.measurement import Measurement
from autotune.online.meter import Step
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.online.pool_cpu import WorkersCpu, worker_pids
from autotune.online.predict import needed_workers
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec
from benchmarks.climb_sim import Machine, SimCpu

POOL = LoaderConfig(num_workers=2, prefetch_factor=2)


def _pool(workers: int, workers_cores: float | None) -> Measurement:
    """100 steady steps at 25 batches/s, 3 s of their 4 s waiting for batches not yet made, a
    10 ms step (100 batches/s fed) using a tenth of a core."""
    m = Measurement(
        LoaderConfig(num_workers=workers, prefetch_factor=2),
        rates=[25.0],
        spans=[4.0],
        steady_steps=100,
        steady_s=4.0,
        steady_wait_s=3.0,
        steady_unready_s=3.0,
        steady_work_cpu_s=0.1,
    )
    if workers_cores is not None:
        m.add_workers_cpu((0.0, 0.0), (workers_cores * 4.0, 4.0))
    return m


def test_workers_waiting_on_storage_predict_the_count_their_rate_scales_to():
    waiting = _pool(2, workers_cores=0.1)
    # 110 batches/s wanted (the step's 100 and its headroom), 12.5 a worker: 9 workers
    assert needed_workers(waiting, waiting, usable_cpus=2, max_workers=64) == 9


def test_workers_filling_the_cores_predict_no_more_than_the_cores_allow():
    computing = _pool(8, workers_cores=1.9)
    # 1.9 cores over 25 batches/s: 76 ms of CPU a batch, one core's worth for each worker
    assert needed_workers(computing, computing, usable_cpus=2, max_workers=64) == 3


def test_a_pool_predicts_nothing_unread_or_fed():
    unread = _pool(2, workers_cores=None)
    assert needed_workers(unread, unread, usable_cpus=2, max_workers=64) is None
    fed = _pool(2, workers_cores=0.1)
    fed.steady_wait_s = fed.steady_unready_s = 0.01  # the loop hardly waits: the step's rate
    assert needed_workers(fed, fed, usable_cpus=2, max_workers=64) is None


def test_a_short_epochs_restart_is_not_read_as_the_workers_scaling():
    """Whole-epoch windows hold each epoch's restart (a non-persistent pool's opens): here 30
    steps whose steady steps ran at 25 batches/s, in a window of 2 s. Read as what two workers
    deliver, the window made two workers look no faster than the one the steady steps show, and
    the prediction ran to the top of the range."""
    restarting = _pool(2, workers_cores=0.1)
    restarting.rates, restarting.spans = [15.0], [2.0]
    steady = _pool(2, workers_cores=0.1)
    assert needed_workers(restarting, restarting, usable_cpus=2, max_workers=64) == needed_workers(
        steady, steady, usable_cpus=2, max_workers=64
    )


def test_a_fresh_pools_first_round_is_no_steady_step():
    """A whole-epoch window's rate holds every step; its steady figures, what the workers'
    scaling is read from, leave out the segment's warm-up: a non-persistent pool's first round
    comes as its workers were forked, one after another, which no more workers shorten."""
    m = Measurement(POOL)
    m.add_to_epoch(Step(0, None, 0.5, 0, 0.5), steady=False)  # iter(): the refill and the forks
    m.add_to_epoch(Step(1, 0.02, 0.015, 1, None), steady=False)  # the second worker's fork
    m.add_to_epoch(Step(2, 0.01, 0.005, 2, None), steady=True)
    assert m.close_epoch()
    assert m.rates == [pytest.approx(3 / 0.53)]
    assert (m.steady_steps, m.steady_s, m.steady_wait_s) == (1, 0.01, 0.005)


# The bench's tiny-epochs: a 0.4 s open in each worker and 30-step epochs.
TINY_EPOCHS = SimSpec(cpu_ms=0.5, io_ms=1, step_ms=8, batch=16, length=480, open_ms=400)


def test_short_epochs_from_two_workers_stop_at_the_simulated_best():
    """From w2 pf2, each epoch's restart of the start's pool (its forks, its opens, the refill)
    once read as two workers delivering no more than one, and the prediction asked for eight
    workers; the steady steps ask for four, the simulated grid's best (climb_sim.py)."""
    machine = Machine(TINY_EPOCHS)
    settings = ClimbSettings(epoch_steps=machine.epoch, usable_cpus=2, cuda=False)
    climb = HillClimb(POOL, TUNED, settings, cpu=SimCpu(machine))
    machine.run(climb, 1500)
    assert climb.best.config.num_workers == 4


# The bench's open-30: a 0.4 s open in each worker, 30-step epochs, 4 ms storage waits per item.
OPEN_30 = SimSpec(cpu_ms=0.6, io_ms=4, step_ms=6, batch=16, length=480, open_ms=400)


def test_a_pool_that_exits_with_its_epoch_is_read_at_the_epochs_last_batch():
    """torch shuts a non-persistent pool down as its epoch ends, before the loop sees the end
    (the simulated pool's CPU reads None from then on). Read there, the start `w2 pf2` had no
    reading, predicted nothing, and the climb went to `w3` first, as on the machine
    (results/bench/online-epoch-steady); read at the epoch's last batch, it jumps at once."""
    machine = Machine(OPEN_30)
    settings = ClimbSettings(epoch_steps=machine.epoch, usable_cpus=2, cuda=False)
    climb = HillClimb(POOL, TUNED, settings, cpu=SimCpu(machine))
    machine.run(climb, 600)
    assert climb.measured[POOL].workers_cores is not None
    tried = [c.num_workers for c, m in climb.measured.items() if m.n and c != POOL]
    assert tried and tried[0] >= 10


def test_a_negative_reading_is_left_out():
    m = Measurement(POOL)
    m.add_workers_cpu((5.0, 1.0), (4.0, 2.0))  # another pool's workers were read first
    assert m.workers_cores is None


# The bench's open-300: a 2 s open in each worker and 300-step epochs, items waiting on storage.
OPEN_300 = SimSpec(cpu_ms=0.2, io_ms=6, step_ms=12, batch=16, length=4800, open_ms=2000)


def _climb_from(start: LoaderConfig, read_cpu: bool) -> tuple[HillClimb, float]:
    machine = Machine(OPEN_300)
    settings = ClimbSettings(epoch_steps=machine.epoch, usable_cpus=2, cuda=False)
    climb = HillClimb(start, TUNED, settings, cpu=SimCpu(machine) if read_cpu else None)
    return climb, machine.run(climb, 1500).seconds


def test_a_start_with_two_workers_jumps_to_the_predicted_count():
    """Without the workers' CPU the climb goes up by rungs, each a 2 s open, and its bound stops
    it at 3 workers; with it, the start's prediction takes it to 10 at once."""
    read, read_s = _climb_from(POOL, read_cpu=True)
    blind, blind_s = _climb_from(POOL, read_cpu=False)
    assert read.best.config.num_workers >= 8
    assert blind.best.config.num_workers <= 4
    assert read_s < 0.7 * blind_s


def test_a_start_at_num_workers_0_is_read_as_before():
    """The workers' CPU changes nothing where the start measured the fetch itself."""
    read, read_s = _climb_from(LoaderConfig(), read_cpu=True)
    blind, blind_s = _climb_from(LoaderConfig(), read_cpu=False)
    assert read.best.config == blind.best.config
    assert read_s == pytest.approx(blind_s)


class _Busy(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, i: int) -> int:
        t = time.process_time()
        while time.process_time() - t < 0.01:  # 10 ms of CPU an item
            pass
        return i


def test_a_real_pools_workers_cpu_is_read_and_a_gone_pool_reads_none():
    loader = torch.utils.data.DataLoader(_Busy(), batch_size=4, num_workers=2)
    it = iter(loader)
    reader = WorkersCpu(lambda: worker_pids(it))
    first = reader.start()
    assert first is not None
    for _ in range(8):
        next(it)
    second = reader.read()
    assert second is not None
    assert second[0] - first[0] > 0.1  # 8 batches of 4 items, 10 ms of CPU each, at least
    it._shutdown_workers()
    assert reader.read() is None
    assert WorkersCpu(lambda: worker_pids(None)).start() is None  # no pool: nothing read


def test_a_non_persistent_pool_lives_through_its_epochs_last_batch():
    """What the climb's read at an epoch's last batch relies on: torch shuts a non-persistent
    pool down in the call that ends the epoch (StopIteration), not with its last batch."""
    loader = torch.utils.data.DataLoader(_Busy(), batch_size=4, num_workers=2)
    it = iter(loader)
    reader = WorkersCpu(lambda: worker_pids(it))
    assert reader.start() is not None
    for _ in range(len(loader)):
        next(it)
    assert reader.read() is not None
    with pytest.raises(StopIteration):
        next(it)
    assert reader.read() is None


class _Storage(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 4000

    def __getitem__(self, i: int) -> int:
        time.sleep(0.004)  # an item waiting on storage
        return i


def test_a_loader_started_with_workers_reads_its_pools_cpu():
    """The reader setup.py gives the climb finds the running pool through the loader (weakly:
    tests/test_online_stream.py checks no cycle keeps it alive) and reads its start's workers."""
    import autotune

    loader = autotune.DataLoader(
        _Storage(), batch_size=4, num_workers=2, online={"results_dir": None, "memory": False}
    )
    it = iter(loader)
    for _ in range(120):
        next(it)
    start = loader._session.policy.measured[POOL]
    assert start.workers_cores is not None
    del it
