"""The adaptive worker range (decision/worker_range.py), read from bursts by the search
(search/search_range.py): it grows while the best waits at the top with CPUs to spare, or while
the rate still rises there, as far as memory allows, and says why it stopped where it did."""

from __future__ import annotations

from fakes import burst

import autotune.search.guard as guard_module
from autotune.decision.thresholds import HARD_LIMIT
from autotune.decision.worker_range import WorkerRange, at_top
from autotune.diagnosis import Context
from autotune.probe.ceilings import Ceilings
from autotune.probe.device import DeviceProbe
from autotune.probe.loader import LoaderProbe
from autotune.recipe.model import Measured
from autotune.search.guard import MemoryGuard
from autotune.search.search_range import SearchRange
from autotune.search.stopping import StopRules
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace
from benchmarks.grid import coverage, grid_configs
from benchmarks.workloads import BENCH_WORKLOADS

CONTEXT = Context(usable_cpus=2)
ROOMY = MemoryGuard(budget_mib=1e9, batch_mib=0.0)


def _trial(
    number: int, workers: int, rate: float, *, waiting: bool = True, cpu_pct: float = 20.0
) -> TrialRecord:
    config = LoaderConfig(num_workers=workers, prefetch_factor=2)
    # Waiting on the loader 70% of the step (input-bound), or computing 90% (device-bound).
    phases = (
        dict(wait=0.7, compute=0.2, busy=0.2) if waiting else dict(wait=0.02, compute=0.9, busy=0.9)
    )
    return TrialRecord(
        number,
        config,
        TrialStatus.OK,
        result=burst(config=config, rate=rate, cpu_pct=cpu_pct, **phases),
    )


def _range(top: int = 8, limit: int = HARD_LIMIT, explicit: bool = False) -> SearchRange:
    return SearchRange(
        SearchSpace(max_workers=top, cuda=False, channels_last_ok=False),
        WorkerRange(top, limit, explicit, limit_name="--max-workers"),
    )


def decide_growth(
    trials: list[TrialRecord],
    top: int,
    limit: int,
    explicit: bool,
    guard: MemoryGuard,
    context: Context,
) -> tuple[int | None, str | None]:
    """The new top (None where it stays) and why it stopped."""
    workers = _range(top, limit, explicit)
    fresh = workers.grow(trials, guard, context)
    return (workers.space.max_workers if fresh else None), workers.stop


def test_the_top_quarter_of_the_range_counts_as_its_top():
    assert at_top(8, 8) and at_top(6, 8) and not at_top(5, 8)
    assert at_top(1, 2) and not at_top(0, 2)


def test_a_waiting_best_at_the_top_grows_the_range_by_half_and_is_measured_there_first():
    trials = [_trial(0, 4, 500), _trial(1, 8, 900)]
    workers = _range()
    fresh = workers.grow(trials, ROOMY, CONTEXT)
    assert workers.space.max_workers == 12 and workers.stop is None
    assert [c.num_workers for c in fresh] == [10, 12]
    assert all(c.prefetch_factor == 2 for c in fresh)  # the best's other knobs
    trials += [_trial(2, 10, 1000), _trial(3, 12, 900), _trial(5, 11, 970)]
    assert workers.grow(trials, ROOMY, CONTEXT) == []  # peaked at 10: 12 measured lower
    assert (
        workers.stop
        == "the rate fell past the best's 10 workers (12 workers: 900 against 1000 samples/s)"
    )
    assert workers.grown_from == 8
    trials += [_trial(4, 7, 1100)]
    assert (
        decide_growth(trials, 12, HARD_LIMIT, False, ROOMY, CONTEXT)[1]
        == "the best has 7 workers, below the range's top of 12"
    )


def test_the_range_stops_where_the_workers_compute_or_the_step_is_the_bottleneck():
    top, why = decide_growth(
        [_trial(0, 8, 900, cpu_pct=97.0)], 8, HARD_LIMIT, False, ROOMY, CONTEXT
    )
    assert top is None and why.startswith("the workers compute, not wait")
    top, why = decide_growth(
        [_trial(0, 8, 900, waiting=False)], 8, HARD_LIMIT, False, ROOMY, CONTEXT
    )
    assert top is None and "waits for data 2% of the step" in why


def test_a_rate_still_rising_at_the_top_outweighs_a_busy_cpu():
    # One item in 40 waits on storage: 12 workers keep 2 CPUs 87% busy, yet beat 8 by 10%.
    rising = [_trial(0, 8, 1000, cpu_pct=87.0), _trial(1, 12, 1100, cpu_pct=97.0)]
    assert decide_growth(rising, 12, HARD_LIMIT, False, ROOMY, CONTEXT) == (18, None)
    flat = [_trial(0, 8, 1080, cpu_pct=87.0), _trial(1, 12, 1100, cpu_pct=97.0)]  # within noise
    top, why = decide_growth(flat, 12, HARD_LIMIT, False, ROOMY, CONTEXT)
    assert top is None and why.startswith("the workers compute, not wait")


def test_the_range_stops_at_max_workers_or_the_hard_limit():
    trials = [_trial(0, 16, 900)]
    assert decide_growth(trials, 16, 16, True, ROOMY, CONTEXT)[1] == "--max-workers=16"
    grown = decide_growth(trials, 16, 20, True, ROOMY, CONTEXT)
    assert grown[0] == 20  # half again would be 24: the cap holds it to 20
    at_limit = [_trial(0, HARD_LIMIT, 900)]
    assert (
        decide_growth(at_limit, HARD_LIMIT, HARD_LIMIT, False, ROOMY, CONTEXT)[1]
        == f"the hard limit of {HARD_LIMIT} workers"
    )


def test_the_range_grows_only_as_far_as_memory_allows_and_says_when_none_fits(monkeypatch):
    # The estimate: the tuner (nothing, here) plus 100 MiB a worker.
    monkeypatch.setattr(guard_module, "tree_memory_mib", lambda: (0.0, 0.0))
    guard = MemoryGuard(budget_mib=1000.0, batch_mib=0.0, worker_mib=100.0)
    trials = [_trial(0, 8, 900)]
    assert decide_growth(trials, 8, HARD_LIMIT, False, guard, CONTEXT)[0] == 10  # 12 would not fit
    tight = MemoryGuard(budget_mib=850.0, batch_mib=0.0, worker_mib=100.0)
    top, why = decide_growth(trials, 8, HARD_LIMIT, False, tight, CONTEXT)
    assert top is None and why.startswith("12 workers needs ~1200 MiB of RAM")


def test_search_ending_for_another_reason_is_named_as_the_ranges_stop():
    workers = _range()
    workers.ended("budget")
    assert workers.stop == "the search ended first (budget)"
    workers.ended("stopped by SIGINT")
    assert workers.stop == "the search ended first (budget)"  # the first reason stays


def test_new_seeds_run_before_patience_counts_again():
    rules = StopRules(device_ceiling=0.0, seeds=1, patience=1)
    rules.update(_trial(0, 4, 500))
    rules.update(_trial(1, 8, 400))
    assert rules.reason() == "no gain in 1 trials"
    rules.restart(2)
    assert rules.reason() is None
    rules.update(_trial(2, 10, 450))
    rules.update(_trial(3, 12, 450))
    assert rules.reason() is None  # both were seeds
    rules.update(_trial(4, 11, 450))
    assert rules.reason() == "no gain in 1 trials"


def test_the_recipe_says_where_the_range_ended_and_from_where_it_grew():
    m = Measured(
        samples_per_s=1.0,
        baseline_samples_per_s=1.0,
        speedup=1.0,
        max_workers_searched=12,
        worker_range_grown_from=8,
        worker_range_stop="the search ended first (budget)",
    )
    assert m.range_note() == (
        "Worker range searched: 0-12 (grown from 0-8); it stopped there:"
        " the search ended first (budget)."
    )
    assert Measured(samples_per_s=1.0, baseline_samples_per_s=1.0, speedup=1.0).range_note() is None


def test_the_deep_storage_bench_grid_reaches_past_the_starting_range():
    [deep] = [w for w in BENCH_WORKLOADS if w.key == "deep-storage"]
    space = SearchSpace(max_workers=max(deep.grid_workers), cuda=False, channels_last_ok=False)
    configs = grid_configs(space, deep.held_off("cpu"), deep.grid_workers)
    assert sorted({c.num_workers for c in configs}) == list(deep.grid_workers)
    assert max(deep.grid_workers) > 4 * 2  # above 4 x CPUs on the 2-CPU bench machine
    assert "at 0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 20 workers" in coverage(
        space, deep.held_off("cpu"), deep.grid_workers
    )
    [short] = [w for w in BENCH_WORKLOADS if w.key == "short-epochs"]
    assert "persistent_workers" not in short.held_off("cpu")  # the knob its epochs hinge on


def _ceilings(device_rate: float, one_worker_rate: float, worker_cores: float) -> Ceilings:
    c = Ceilings((DeviceProbe(device_rate, False, 10, 1.0, 0.0),), 2)
    c.add(LoaderProbe(1, one_worker_rate, 1.0, int(one_worker_rate), worker_cores + 0.05, 0.05))
    return c


def test_a_waiting_loader_predicted_past_the_top_starts_the_range_one_past_the_prediction():
    workers = _range()
    # One worker sleeping on storage delivers 80/s against a step eating 800/s: 11-12 workers.
    storage = _ceilings(800, 80, worker_cores=0.05)
    assert storage.predicted_workers(HARD_LIMIT) > 8
    workers.follow_prediction(storage, ROOMY)
    assert workers.space.max_workers == storage.predicted_workers(HARD_LIMIT) + 1
    assert workers.grown_from == 8
    capped = _range(limit=10, explicit=True)
    capped.follow_prediction(_ceilings(800, 80, worker_cores=0.05), ROOMY)
    assert capped.space.max_workers == 10


def test_a_computing_loader_or_a_prediction_within_the_range_leaves_it_alone():
    cpu_bound = _range()
    cpu_bound.follow_prediction(_ceilings(800, 80, worker_cores=1.0), ROOMY)  # cores run out at 3
    assert cpu_bound.space.max_workers == 8 and cpu_bound.grown_from is None
    near = _range()
    near.follow_prediction(_ceilings(800, 200, worker_cores=0.05), ROOMY)  # 5 workers
    assert near.space.max_workers == 8
