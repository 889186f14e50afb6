"""benchmarks/inorder_model.py and climb_sim.py: torch's in-order hand-out, computed. Where
every batch takes as long, the rate is the slower of the step and the workers (W / batch time);
stragglers need more batches in flight, and a deeper queue is never slower."""

import random

import pytest

from autotune.online.policy import FixedPolicy
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec
from benchmarks.climb_sim import Machine, ideal_config, one_round
from benchmarks.inorder_model import (
    batch_seconds,
    cpu_ceiling,
    delivered_rate,
    grid,
    table,
)

STEP_S = 0.010


def test_at_num_workers_0_the_loop_fetches_then_steps():
    assert delivered_rate([0.030] * 100, 0, 0, STEP_S) == pytest.approx(1 / 0.040)


@pytest.mark.parametrize(
    ("workers", "expected"), [(2, 2 / 0.030), (3, 1 / STEP_S), (8, 1 / STEP_S)]
)
def test_equal_batches_run_at_the_slower_of_the_step_and_the_workers(workers, expected):
    # The window is counted in whole steps: within 1% of the rate.
    assert delivered_rate([0.030] * 400, workers, 2, STEP_S) == pytest.approx(expected, rel=0.01)


def test_a_straggling_batch_holds_the_loop_back_unless_the_queue_rides_it_out():
    # One batch in ten takes 10x, at random: 4 workers make 210 batches/s on average, twice the
    # step's 100, yet one queue slot each leaves the loop waiting behind each straggler.
    draw = random.Random(0)
    times = [0.100 if draw.random() < 0.1 else 0.010 for _ in range(4000)]
    rates = [delivered_rate(times, 4, depth, STEP_S) for depth in (1, 2, 4, 8)]
    assert rates == sorted(rates)
    assert rates[0] < 0.8 * rates[-1]
    assert rates[-1] == pytest.approx(1 / STEP_S, rel=0.01)


def test_the_sampler_s_shuffle_places_one_straggler_in_straggle_every():
    spec = SimSpec(cpu_ms=1, io_ms=2, batch=4, length=40, straggle_every=10, straggle_x=5)
    times = batch_seconds(spec, 10, seed=0)  # the whole dataset, once
    # 40 items: 4 stragglers of 10 ms storage, 36 of 2 ms, 1 ms of CPU each.
    assert sum(times) == pytest.approx((4 * 10 + 36 * 2 + 40 * 1) / 1000)


def test_the_cores_cap_the_workers_cpu():
    spec = SimSpec(cpu_ms=5, step_ms=10, host_ms=10, batch=4, collate_ms=0)
    # 20 ms of CPU a batch; the loop's host_ms keeps half a core busy.
    assert cpu_ceiling(spec, 2.0) == pytest.approx(1.5 / 0.020)
    assert cpu_ceiling(SimSpec(cpu_ms=0, collate_ms=0), 2.0) == float("inf")


def test_the_grid_marks_the_points_the_cores_cap_and_the_best():
    spec = SimSpec(cpu_ms=2, io_ms=0, step_ms=5, batch=8, length=4096)
    points = grid(spec, [0, 1, 4], cpus=2.0, seeds=1)
    by_label = {p.label: p for p in points}
    assert set(by_label) == {"w0", *(f"w{w} pf{d}" for w in (1, 4) for d in (1, 2, 4, 8))}
    # 16 ms of CPU a batch on two cores: at most 125 batches/s, below the step's 200.
    assert by_label["w4 pf2"].cpu_bound and by_label["w4 pf2"].batches_per_s == pytest.approx(125)
    assert not by_label["w1 pf1"].cpu_bound
    rows = table("cpu", spec, points)
    assert any(line.startswith("| 4 |") and "(cores) *" in line for line in rows)


# benchmarks/climb_sim.py: the online climb on the same model's simulated clock.


def test_a_fixed_pool_runs_at_the_models_rate_after_its_start():
    spec = SimSpec(cpu_ms=0, io_ms=1, step_ms=10, batch=16, length=16 * 2000)  # 16 ms a batch
    run = Machine(spec, fork_ms=20, handover_ms=0).run(
        FixedPolicy(LoaderConfig(num_workers=4, prefetch_factor=2)), 1000
    )
    # Four workers make a batch every 4 ms, faster than the 10 ms step: the step sets the pace
    # once the pool runs; its start is the forks (80 ms) and a first batch (16 ms).
    assert run.span(100) / 899 == pytest.approx(0.010, rel=1e-6)
    assert run.handed[0] == pytest.approx(0.020 + 0.016)


def test_the_main_process_pays_its_open_once_and_each_pool_per_worker():
    spec = SimSpec(cpu_ms=0, io_ms=1, step_ms=10, batch=16, length=16 * 100, open_ms=500)
    at_zero = Machine(spec, handover_ms=0).run(FixedPolicy(LoaderConfig(num_workers=0)), 3)
    assert at_zero.handed == pytest.approx([0.516, 0.542, 0.568])
    pool = Machine(spec, fork_ms=0, handover_ms=0).run(
        FixedPolicy(LoaderConfig(num_workers=2, prefetch_factor=2)), 1
    )
    assert pool.handed[0] == pytest.approx(0.516)


def test_the_climb_from_the_scripts_defaults_ends_near_the_simulated_grids_best():
    spec = SimSpec(cpu_ms=0.2, io_ms=5, step_ms=20, batch=16, length=16 * 1500)
    ideal = ideal_config(spec, 1200, lambda seed: Machine(spec, seed=seed))
    done = one_round(spec, ideal, 1200, 0, lambda: Machine(spec))
    assert done.ended is not None and done.after is not None
    assert done.after >= 0.98 and done.whole >= 0.9
