"""A run of unknown length that outlives the horizon its exploring stopped on: exploring resumes
where it stopped, within a horizon grown to twice the run so far and what is left of the bound
(policy.py, HillClimb._resume). Simulated steps (benchmarks/climb_sim.py), no clock."""

from __future__ import annotations

import torch

import autotune
from autotune.online.climb_types import ClimbSettings, StopReason
from autotune.online.finish import Outcome
from autotune.online.meter import Ledger, Step
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec
from benchmarks.climb_sim import Machine, SimCpu

POOL = LoaderConfig(num_workers=2, prefetch_factor=2)
# The bench's short-epochs: a 2 s open in each worker, 300-step epochs; two workers keep the
# 8 ms step waiting about a third of its time, three do not.
SHORT_EPOCHS = SimSpec(cpu_ms=0.3, io_ms=1, step_ms=8, batch=16, length=4800, open_ms=2000)


def _climb(machine: Machine, total_steps: int | None = None) -> HillClimb:
    settings = ClimbSettings(
        epoch_steps=machine.epoch, usable_cpus=2, cuda=False, total_steps=total_steps
    )
    return HillClimb(POOL, TUNED, settings, cpu=SimCpu(machine))


def test_a_candidate_the_first_horizon_cannot_repay_is_tried_once_the_run_shows_it_can():
    """From w2 pf2 the predicted candidate's 2 s start-up is more than 600 steps' bound and
    gain: exploring stops at once. Each time the run outlives the horizon (600, 1,200, 2,400
    steps) the horizon doubles; the candidate is tried once the length the run is then expected
    to reach (1.5 times its steps) leaves enough steps, after its 900 steps of whole-epoch
    windows, to repay two start-ups: at 4,800."""
    machine = Machine(SHORT_EPOCHS)
    climb = _climb(machine)
    run = machine.run(climb, 4700)
    assert climb.stop_reason is StopReason.BOUND and climb.steps < 50
    assert climb.resumed_at == [] and climb.horizon_steps == 4800
    assert run.config.num_workers == 2

    machine = Machine(SHORT_EPOCHS)
    climb = _climb(machine)
    run = machine.run(climb, 7000)
    assert climb.resumed_at == [4800] and climb.horizon_steps == 9600
    assert not climb.exploring and run.ended is not None and run.ended > 4800
    assert run.config.num_workers >= 3  # no longer starved
    measured = Ledger()
    measured.explore_steps = climb.steps
    line = Outcome.of(climb, measured, {}, 16, torch.device("cpu")).measured.exploration_stop
    assert "; resumed at step 4800 (the run outlived its horizon)" in line


def test_a_run_of_known_length_never_resumes():
    """Its horizon is the run: what it cannot repay in its steps left it never tries."""
    machine = Machine(SHORT_EPOCHS)
    climb = _climb(machine, total_steps=1100)
    machine.run(climb, 1100)
    assert climb.resumed_at == [] and climb.horizon_steps == 600


def test_a_horizon_that_ends_exploring_before_its_first_candidate_is_never_resumed():
    """`max_explore_steps` bounds the exploring the user allows: a run whose horizon (here one
    20-step epoch) ended with the jump's candidate unjudged keeps its choice however long it
    runs. (A plain 2-epoch script on a loaded machine resumed at its last epoch's end and
    ended exploring.)"""
    spec = SimSpec(cpu_ms=0.3, io_ms=1, step_ms=8, batch=16, length=320, open_ms=0)
    machine = Machine(spec)
    settings = ClimbSettings(
        epoch_steps=machine.epoch, usable_cpus=2, cuda=False, min_horizon_steps=1
    )
    climb = HillClimb(LoaderConfig(), TUNED, settings, cpu=SimCpu(machine))
    run = machine.run(climb, 400)
    assert climb.stop_reason is StopReason.EPOCH_END and run.ended == machine.epoch
    assert [m.n for m in climb.measured.values()] == [1, 0]  # the start only
    assert climb.resumed_at == [] and climb.horizon_steps == machine.epoch


class ResumesAtItsSecondEpochsEnd:
    """A policy that explores its first 4 steps, then again from its second epoch's end."""

    def __init__(self) -> None:
        self.exploring, self.current, self.epochs = True, LoaderConfig(), 0

    def observe(self, step: Step) -> None:
        if step.index == 3 or step.index == 13:
            self.exploring = False

    def epoch_ended(self) -> None:
        self.epochs += 1
        if self.epochs == 2:
            self.exploring = True


def test_a_resumed_exploring_reports_the_best_so_far_and_ends_at_its_last_step():
    """The outcome published at the first stop gives way to the interim one (the best so far)
    until exploring ends again; the steps explored end at the resumed exploring's last."""
    session = autotune.DataLoader(list(range(64)), batch_size=2)._session
    session.policy = ResumesAtItsSecondEpochsEnd()
    session.outbox.outcome = "published at the first stop"  # what _conclude would publish
    for i in range(5):
        session.handed_out(Step(i, 0.01, 0.0, i, None))
    session.epoch_ended()
    assert session.ended_at == 4 and session.outbox.outcome is not None
    for i in range(5, 10):
        session.handed_out(Step(i, 0.01, 0.0, i - 5, None))
    session.epoch_ended()  # exploring resumes
    assert session.policy.exploring and session.outbox.outcome is None
    assert session.ended_at is None
    for i in range(10, 20):
        session.handed_out(Step(i, 0.01, 0.0, i - 10, None))
    assert session.ended_at == 14 and session.ledger.explore_steps == 4 + 4
