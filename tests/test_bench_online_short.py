"""`bench --online`'s short run: its ideal is the fastest hand-set configuration over the run
itself, (b) is told the run's length, each (b) starts as a fresh process would, and the short
runs stay out of the offline bench. Trainings are faked (no timing is asserted)."""

from __future__ import annotations

import torch

from autotune.online import registry
from autotune.online.registry import Choice
from autotune.space.config import LoaderConfig
from benchmarks import online_run, online_short, workloads
from benchmarks.online_figures import StepTimes, Way
from benchmarks.online_grid import Ideal
from benchmarks.options import OnlineBenchOptions

CPU = torch.device("cpu")


class _Loader:
    tuner_state = None


def test_short_runs_are_online_only():
    offline = [w.key for w in workloads.select(None, quick=False)]
    online = [w.key for w in workloads.select(None, quick=False, online=True)]
    assert "short-run" not in offline and "short-run" in online
    (short,) = [w for w in workloads.BENCH_WORKLOADS if w.online_steps]
    assert short.online_steps <= 200  # the short run: at most 200 steps in all


def test_the_hand_set_best_is_the_fastest_over_the_whole_run(monkeypatch):
    runs = []

    def fake_train(workload, make_loader, device, transfer, steps, what):
        config = make_loader()
        runs.append((config, steps))
        # w4 pf2 is fastest; every other configuration 1 s slower per extra worker away from 4
        s = 6.0 + abs(config.num_workers - 4) + (config.prefetch_factor - 2) * 0.1
        return StepTimes(tuple(s * (i + 1) / steps for i in range(steps))), _Loader()

    class Workload:
        def make_loader(self, config):
            return config

    monkeypatch.setattr(online_short, "train", fake_train)
    lines: list[str] = []
    ideal = online_short.hand_set_best("short", Workload(), CPU, 160, lines.append)
    assert ideal.config == LoaderConfig(num_workers=4, prefetch_factor=2, persistent_workers=True)
    assert len(runs) == len(online_short.hand_set()) and {s for _, s in runs} == {160}
    assert all(c.persistent_workers for c, _ in runs)
    assert "over the same 160 steps" in ideal.source and "w4 pf2 persist 6.00s" in lines[0]


def test_b_is_told_the_run_length_and_starts_with_a_fresh_registry(monkeypatch):
    seen = []

    def fake_train(workload, make_loader, device, transfer, steps, what):
        seen.append((steps, dict(registry.registry().choices), make_loader()))
        return StepTimes((1.0,) * steps), _Loader()

    class Workload:
        def loader_arguments(self):
            return {}

        def make_loader(self, config):
            return config

    monkeypatch.setattr(online_run, "train", fake_train)
    monkeypatch.setattr(online_run, "DataLoader", lambda online, **_: online)
    registry.registry().choices["earlier round"] = Choice(LoaderConfig(num_workers=5), "x")
    ideal = Ideal(LoaderConfig(num_workers=4, persistent_workers=True), "test")
    opts = OnlineBenchOptions(steps=3000, device="cpu")
    online_run.train_way(Way.ONLINE, Workload(), CPU, ideal, opts, "b", total_steps=160)
    online_run.train_way(Way.IDEAL, Workload(), CPU, ideal, opts, "c", total_steps=160)
    (b_steps, b_choices, b_options), (c_steps, _, c_loader) = seen
    assert (b_steps, c_steps) == (160, 160) and c_loader == ideal.config
    assert b_choices == {}  # round 1's choice is not round 2's start
    assert b_options.total_steps == 160
    assert online_run.online_options(opts, CPU).total_steps is None
