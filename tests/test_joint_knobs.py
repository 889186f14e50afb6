"""Knobs judged together (issue 45): an epoch's time is its steady time plus its restart cost
(decision/epoch_time.py), so worker counts are compared at one persistence setting, never a rate
that paid a pool's restart every epoch against one that did not; where restarts matter, the
worker count the model finds best is confirmed with persistent workers on.

The fake bursts reproduce the measured miss: 30-step epochs, a per-worker open paid by every fresh
pool, and 5 and 6 workers measured only without persistent workers (441 and 444 samples/s, their
steady rates 984 and 1115), persistence only at 3 and 4 workers."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from search_fakes import burst

from autotune.decision.epoch_time import (
    EpochParts,
    epoch_rate,
    shared_setting,
    steady_of,
    window_rules_out,
)
from autotune.decision.verdict import Pieces, Verdict
from autotune.decision.worker_range import growth_stop
from autotune.diagnosis import Context
from autotune.diagnosis.advice import _scaling
from autotune.diagnosis.effects import best_rate_by_workers, workers_at
from autotune.diagnosis.epochs import epoch_advice
from autotune.online.climb_types import ClimbSettings
from autotune.online.measurement import Measurement
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.probe.ceilings import Ceilings
from autotune.search.choose import choose, group, pick_best
from autotune.search.confirm import to_confirm
from autotune.search.phases import persistent_twin
from autotune.search.search_range import evidence
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.search.trial_runner import TrialRunner
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.simulated import SimSpec
from benchmarks.workloads import BENCH_WORKLOADS

BATCH, EPOCH_STEPS = 16, 30
EPOCH = BATCH * EPOCH_STEPS  # samples
STEADY = {0: 300.0, 3: 700.0, 4: 874.0, 5: 984.0, 6: 1115.0, 8: 1300.0}  # samples/s once running
REFILL_S = 0.01  # a persistent pool's refill over a steady step


def fresh_restart_s(workers: int) -> float:
    """A fresh pool's start-up over a steady step: more workers, more opens to wait for."""
    return 0.0 if workers == 0 else 0.35 + 0.05 * workers


def w(workers: int, prefetch: int = 2, persist: bool = False) -> LoaderConfig:
    return LoaderConfig(
        num_workers=workers,
        prefetch_factor=prefetch if workers else None,
        persistent_workers=persist,
    )


def measure(config: LoaderConfig, number: int, *, epoch: int = EPOCH, scale: float = 1.0):
    """One fake burst of `config` as the runner records it (burst/runner.py with_epochs): the
    epoch rate, the steady rate, the restart paid per epoch under its own setting, and a start-up
    that, persistent or not, started a fresh pool."""
    n = config.num_workers
    steady, fresh = STEADY[n], scale * fresh_restart_s(n)
    cost = REFILL_S if config.persistent_workers and n else fresh
    result = replace(
        burst(config, epoch_rate(steady, epoch, cost)),
        steps=100,
        samples=100 * BATCH,
        startup_s=fresh + BATCH / steady,
        steady_samples_per_s=steady,
        restart_cost_s=cost,
        epoch_samples=epoch,
    )
    return TrialRecord(number, config, TrialStatus.OK, result, phase=Phase.SEARCH)


# The order the search measured them in: the defaults, the seeds, the twin of the best (4 workers),
# then what the sampler proposed.
OLD_ORDER = [PYTORCH_DEFAULTS, w(3), w(4), w(4, persist=True), w(3, persist=True), w(5), w(6)]
GRID_BEST = w(8, prefetch=4, persist=True)


def run(order: list[LoaderConfig]) -> list[TrialRecord]:
    """The search's loop (phases._search) over a fixed sampler order: a point measured already is
    not measured again (the ledger), and after each trial the persistent twin the one rule asks
    for is measured first; then the confirm phase's first round (phases.confirm)."""
    trials: list[TrialRecord] = []
    for config in order:
        if any(t.config == config for t in trials):
            continue
        trials.append(measure(config, len(trials)))
        twin = persistent_twin(trials)
        if twin is not None:
            trials.append(measure(twin, len(trials)))
    space = SearchSpace(max_workers=8, cuda=False, channels_last_ok=False)
    for config in to_confirm(group(trials), space):
        trials.append(replace(measure(config, len(trials)), phase=Phase.CONFIRM))
    return trials


def test_the_epoch_model_predicts_one_setting_from_the_other():
    np = measure(w(5), 0).burst.epoch_parts
    p = measure(w(5, persist=True), 0).burst.epoch_parts
    # Measured without persistent workers: 441 samples/s, 984 once running.
    assert np.rate(False) == pytest.approx(measure(w(5), 0).rate)
    assert np.rate(True) == pytest.approx(984.0)
    # Measured with them, its burst's start-up still measured a fresh pool.
    assert p.fresh_restart_s == pytest.approx(fresh_restart_s(5))
    assert p.rate(False) == pytest.approx(np.rate(False))
    assert p.restart_share == pytest.approx(0.6 / (EPOCH / 984.0 + 0.6))
    assert steady_of(np.rate(False), EPOCH, 0.6) == pytest.approx(984.0)
    assert shared_setting([np]) is False and shared_setting([np, p]) is True


def test_the_measured_miss_now_chooses_eight_persistent_workers():
    # The old mistake's inputs: persistence measured at 3 and 4 workers only, 5 and 6 workers
    # without it, each paying the opens every epoch; as measured, 4 persistent workers win.
    old = [measure(c, i) for i, c in enumerate(OLD_ORDER)]
    assert [round(t.rate) for t in old if t.config.num_workers in (5, 6)] == [441, 444]
    assert pick_best(old).config == w(4, persist=True)
    chosen = choose(group(old))
    assert chosen is not None and chosen.chosen.config == w(4, persist=True)
    # Now: each count the model finds fastest at persistent_workers=True is confirmed there by one
    # measurement (its twin), and the grid's best is chosen when the sampler reaches 8 workers.
    trials = run(OLD_ORDER + [w(8, prefetch=4)])
    searched = [t.config for t in trials if t.phase == Phase.SEARCH]
    twins = [c for c in searched if c not in OLD_ORDER + [w(8, prefetch=4)]]
    assert twins == [w(5, persist=True), w(6, persist=True), GRID_BEST]
    assert len(searched) == len(OLD_ORDER) + 1 + len(twins)  # one confirming burst per count
    choice = choose(group(trials))
    assert choice is not None and choice.chosen.config == GRID_BEST


def test_mixed_persistence_rates_are_never_compared_as_worker_evidence():
    trials = [measure(c, i) for i, c in enumerate(OLD_ORDER)]
    at = workers_at(trials)
    assert at.setting is True
    assert at.rates[5] == pytest.approx(984.0) and at.predicted(5)  # not its 441 measured
    assert at.rates[6] == pytest.approx(1115.0) and at.predicted(6)
    assert not at.predicted(4) and at.by_workers[4].config == w(4, persist=True)
    # The range's evidence: the best count at that setting is 6, and no larger pool "fell".
    ev = evidence(pick_best(trials), trials, Context(usable_cpus=2))
    assert (ev.workers, ev.label) == (6, "w6 pf2 persist")
    assert ev.rate_by_workers[5] == pytest.approx(984.0)
    assert "fell" not in (growth_stop(ev, 6) or "")
    # The report's reasoning names the setting and marks the rates the model read.
    line = _scaling(trials, 4)
    assert line.startswith("at persistent_workers=True, 3 workers 690/s, 4 workers 858/s,")
    assert "5 workers 984/s (predicted from its steady rate and restart; measured 441/s" in line


def online_climb(epoch_steps: int | None) -> HillClimb:
    settings = ClimbSettings(epoch_steps=epoch_steps, usable_cpus=2, cuda=False, min_windows=2)
    return HillClimb(w(4), TUNED, settings)


def test_the_online_climb_compares_its_start_and_a_persistent_candidate_at_one_setting():
    climb = online_climb(EPOCH_STEPS)
    assert climb.settings.windowed_by_epoch(w(4))  # short epochs: whole-epoch windows
    start_s = fresh_restart_s(4)
    steady = STEADY[4] / BATCH  # batches/s
    # The start, without persistent workers: every window an epoch with a fresh pool's restart.
    start = Measurement(w(4), startup_s=start_s)
    start.rates = [epoch_rate(steady, EPOCH_STEPS, start_s) * f for f in (1.0, 1.001)]
    start.spans = [EPOCH_STEPS / r for r in start.rates]
    # A persistent candidate whose epochs, refill included, run as fast as the start's steady.
    cand = Measurement(w(5, persist=True), startup_s=fresh_restart_s(5))
    cand.rates, cand.spans = [steady, steady * 1.001], [0.55, 0.55]
    climb.measured = {start.config: start, cand.config: cand}
    climb.best = start
    # As measured, the candidate doubles the start; at persistent_workers=True they tie, and the
    # cheaper start (made persistent at the end) stays.
    assert cand.mean > 1.9 * start.mean
    assert climb.verdict(start, cand) is Verdict.TIED
    ev = climb._evidence(None)
    assert ev.rate_by_workers[4] == pytest.approx(steady, rel=3e-3)
    assert ev.rate == pytest.approx(steady, rel=3e-3)


def test_the_report_names_the_interaction_that_decided_the_choice():
    trials = run(OLD_ORDER + [w(8, prefetch=4)])
    chosen = next(t for t in trials if t.config == GRID_BEST)
    lines = epoch_advice(chosen.burst, trials)
    assert lines[0].startswith("persistent_workers matters here")
    assert lines[1] == (
        "persistent_workers: the restart of 8 workers costs 67% of a 30-step epoch without it;"
        " compared at persistent_workers=True, 8 workers beat 6 (1266 against 1090 samples/s)"
    )


def test_a_negligible_restart_is_read_as_before():
    # Long epochs, a cheap start-up: every rate is compared as measured, as before the model.
    long = 1000 * EPOCH
    order = [PYTORCH_DEFAULTS, w(3), w(4), w(4, persist=True), w(6)]
    trials = [measure(c, i, epoch=long, scale=0.01) for i, c in enumerate(order)]
    at = workers_at(trials)
    assert at.setting is None
    assert at.rates == best_rate_by_workers(trials)  # one burst each: the rates as measured
    assert persistent_twin(trials) is None
    assert _scaling(trials, 4).startswith("3 workers ")
    assert epoch_advice(trials[3].burst, trials)[0].startswith("persistent_workers does not")
    # Online: no epoch length, no setting; the verdict reads the windows as measured.
    climb = online_climb(None)
    start = Measurement(w(4), rates=[50.0, 50.1], spans=[1.0, 1.0], startup_s=0.01)
    cand = Measurement(w(6, persist=True), rates=[60.0, 60.2], spans=[1.0, 1.0], startup_s=0.01)
    climb.measured = {start.config: start, cand.config: cand}
    assert climb._setting() is None
    assert climb._pieces(start, None) == start.pieces == Pieces((50.0, 50.1), (1.0, 1.0), 0)
    assert climb.verdict(start, cand) is Verdict.BETTER


def test_epoch_parts_without_a_length_are_the_steady_rate():
    parts = EpochParts(800.0, 2.0, None, None, persistent=False)
    assert parts.rate(False) == parts.rate(True) == 800.0
    assert parts.restart_share is None and parts.restart_matters is None


def test_the_bench_has_three_workloads_where_workers_and_persistence_interact():
    joint = {w.key: w for w in BENCH_WORKLOADS if w.key.startswith("open-")}
    assert [k for k, w in joint.items() if w.held_out] == ["open-80"]
    epochs = {}
    for key, bench in joint.items():
        spec = SimSpec.parse(bench.spec.split(":", 1)[1])
        epochs[key] = (spec.open_ms, spec.length // spec.batch)
        assert "persistent_workers" not in bench.held_off("cpu")  # the knob they hinge on
        assert max(bench.grid_workers) > 4 * 2  # past the range's start on 2 CPUs
    assert epochs == {"open-30": (400, 30), "open-80": (1000, 80), "open-300": (2000, 300)}


def test_a_burst_without_persistent_workers_is_not_pruned_where_restarts_matter():
    # Pruning reads a burst's running rate over its window, restarts included. Where a restart
    # matters, a non-persistent burst cut short would measure neither its steady rate nor what its
    # persistent twin would run at: the evidence the worker counts are compared on.
    class Probed(Ceilings):  # only the device ceiling's rate is read
        device_samples_per_s = 10_000.0

    options = SimpleNamespace(settings=lambda cap: SimpleNamespace(max_seconds=cap))

    def hook_for(config, finished):
        runner = TrialRunner(
            study=None,
            bursts=SimpleNamespace(ranks=None, options=options),
            guard=None,
            budget=None,
            stop=None,
            context=None,
            trials=finished,
            ceilings=Probed((), 2),
        )
        return runner._prune_hook(SimpleNamespace(), 3.0, config)

    short = [measure(c, i) for i, c in enumerate([PYTORCH_DEFAULTS, w(3), w(4)])]
    assert hook_for(w(6), short) is None
    assert hook_for(w(6, persist=True), short) is not None
    long = [measure(c, i, epoch=1000 * EPOCH, scale=0.01) for i, c in enumerate([w(3), w(4)])]
    assert hook_for(w(6), long) is not None  # negligible restarts: pruned as before
    assert window_rules_out(False, 0, [t.epoch_parts for t in short])  # no pool: no restart
