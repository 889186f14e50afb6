"""The online worker range's memory check (online/pool_memory.py), on this process's real memory:
a pool that fits the guard's budget is admitted, one past it is refused with the guard's reason;
the node's RAM and /dev/shm are shared among its ranks; the first batch sizes the /dev/shm need."""

import torch

from autotune.decision.worker_range import WorkerRange
from autotune.online import pool_memory as pool_module
from autotune.online.pool_memory import PoolMemory, pool_pss_mib
from autotune.search import guard as guard_module
from autotune.search.guard import MemoryGuard
from autotune.space.config import LoaderConfig
from autotune.telemetry.shm import ShmSpace


def test_pool_memory_admits_what_fits_and_says_why_not():
    roomy = PoolMemory(MemoryGuard(budget_mib=1e9, batch_mib=0.0))
    assert roomy(8, 12) == (12, "")
    # a budget below this process alone: no larger pool fits, and the reason names the budget
    tight = PoolMemory(MemoryGuard(budget_mib=1.0, batch_mib=0.0))
    top, why = tight(8, 12)
    assert top is None and "over the budget of 1 MiB" in why


def test_a_refused_growth_keeps_the_top_and_records_why():
    r = WorkerRange.of(2, None, fits=PoolMemory(MemoryGuard(budget_mib=1.0, batch_mib=0.0)))
    assert r.admit(20) == 8 and r.top == 8 and r.grown_from is None
    assert "over the budget" in r.stop
    grown = WorkerRange.of(2, None)
    assert grown.admit(20) == 20 and grown.grown_from == 8 and grown.stop is None
    capped = WorkerRange.of(2, 8)
    assert capped.admit(12) == 8 and capped.stop == "max_workers=8"


def test_a_start_above_the_default_top_is_inside_the_range():
    assert WorkerRange.of(2, None, start=20).top == 20
    assert WorkerRange.of(2, 6, start=20).top == 6  # max_workers given: it is the range


def test_the_ram_budget_and_dev_shm_are_shared_among_the_ranks_of_a_node(monkeypatch):
    monkeypatch.setattr(pool_module, "default_ram_budget_mib", lambda: 8000.0)
    one, four = PoolMemory(), PoolMemory(ranks=4)
    assert (one.guard.budget_mib, four.guard.budget_mib) == (8000.0, 2000.0)
    assert (one.guard.shm_sharers, four.guard.shm_sharers) == (1, 4)
    # 100 MiB of /dev/shm free: 4 workers at prefetch 2 hold 12 batches of 5 MiB, 60 MiB in flight
    monkeypatch.setattr(
        guard_module, "shm_space", lambda: ShmSpace(total_mib=100.0, free_mib=100.0)
    )
    config = LoaderConfig(num_workers=4, prefetch_factor=2)
    for memory in (one, four):
        memory.guard.budget_mib = 1e9
        memory.learn_batch({"x": torch.zeros(5 * 2**20, dtype=torch.uint8), "y": [torch.zeros(0)]})
        assert memory.batch_sized and memory.guard.batch_mib == 5.0
    assert one.guard.skip_reason(config, main_mib=0.0) is None
    assert "/dev/shm" in four.guard.skip_reason(config, main_mib=0.0)  # 25 MiB is its share


def test_the_ram_a_configuration_holds_is_this_process_and_its_workers():
    assert pool_pss_mib() > 0


def test_room_refuses_a_candidate_whose_pool_would_not_fit_now():
    """The check every candidate gets before it starts, on this process's real memory."""
    roomy = PoolMemory(MemoryGuard(budget_mib=1e9, batch_mib=0.0))
    assert roomy.room(LoaderConfig(num_workers=4, prefetch_factor=4)) is None
    tight = PoolMemory(MemoryGuard(budget_mib=1.0, batch_mib=0.0))
    assert "over the budget of 1 MiB" in tight.room(LoaderConfig(num_workers=4))


def test_the_cost_orders_ram_is_read_off_the_loop_and_kept_for_its_own_configuration():
    import threading

    from autotune.online.pool_memory import RamReading

    release = threading.Event()
    values = iter([700.0, 900.0])

    def slow_read() -> float:
        release.wait(10)
        return next(values)

    a, b = LoaderConfig(num_workers=2), LoaderConfig(num_workers=4)
    reading = RamReading(slow_read)
    reading.start(a)  # on a thread: the loop does not wait for it
    assert reading.busy and reading.value(a) is None
    reading.start(a)  # one reading at a time
    release.set()
    reading.wait(10)
    assert not reading.busy and reading.value(a) == 700.0
    assert reading.value(b) is None  # a's reading is not b's
    reading.start(b)
    reading.wait(10)
    assert reading.value(b) == 900.0 and reading.value(a) is None  # a's dropped for b's

    def broken() -> float:
        raise OSError("no /proc here")

    failing = RamReading(broken)
    failing.start(a)
    failing.wait(10)
    assert failing.value(a) is None  # no figure, and no error into the loop


def test_the_check_reads_one_worker_the_largest(monkeypatch):
    """The check's reading of the pool is its largest worker by RSS (free to read), not every
    worker's PSS (a page-table walk each)."""
    from torch.utils.data import DataLoader

    memory = PoolMemory(MemoryGuard(budget_mib=1e9, batch_mib=0.0))
    it = iter(DataLoader(list(range(64)), batch_size=4, num_workers=2))
    next(it)
    read: list[int] = []
    real = pool_module.pss_mib

    def counting(proc):
        read.append(proc.pid)
        return real(proc)

    monkeypatch.setattr(pool_module, "pss_mib", counting)
    assert memory.room(LoaderConfig(num_workers=2)) is None
    del it
    assert len(read) == 2 and memory.guard.worker_mib > 0  # this process and one worker
