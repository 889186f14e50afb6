"""The online worker range's memory check, on this process's real memory: a pool that fits the
guard's budget is admitted, one past it is refused with the guard's reason."""

from autotune.online.worker_range import WorkerRange, pool_memory
from autotune.search.guard import MemoryGuard


def test_pool_memory_admits_what_fits_and_says_why_not():
    roomy = pool_memory(MemoryGuard(budget_mib=1e9, batch_mib=0.0))
    assert roomy(8, 12) == (12, "")
    # a budget below this process alone: no larger pool fits, and the reason names the budget
    tight = pool_memory(MemoryGuard(budget_mib=1.0, batch_mib=0.0))
    top, why = tight(8, 12)
    assert top is None and "over the budget of 1 MiB" in why


def test_a_refused_growth_keeps_the_top_and_records_why():
    r = WorkerRange.of(8, None, fits=pool_memory(MemoryGuard(budget_mib=1.0, batch_mib=0.0)))
    assert r.admit(20) == 8 and r.top == 8 and r.grown_from is None
    assert "over the budget" in r.stop
    grown = WorkerRange.of(8, None)
    assert grown.admit(20) == 20 and grown.grown_from == 8 and grown.stop is None
    assert grown.grow() and grown.top == 30
    capped = WorkerRange.of(8, 8)
    assert not capped.grow() and capped.stop == "max_workers=8"


def test_a_start_above_the_default_top_is_inside_the_range():
    assert WorkerRange.of(8, None, start=20).top == 20
    assert WorkerRange.of(8, 6, start=20).top == 6  # max_workers given: it is the range


def test_the_ram_budget_is_shared_among_the_ranks_of_a_node(monkeypatch):
    from autotune.online import worker_range
    from autotune.search import guard as guard_module

    made = []
    real = guard_module.MemoryGuard

    def recording(budget_mib, batch_mib):
        made.append(budget_mib)
        return real(budget_mib, batch_mib)

    monkeypatch.setattr(worker_range, "MemoryGuard", recording)
    monkeypatch.setattr(worker_range, "default_ram_budget_mib", lambda: 8000.0)
    worker_range.pool_memory()
    worker_range.pool_memory(ranks=4)
    assert made == [8000.0, 2000.0]
