"""The meter's definitions, on a fake clock: step = between batches handed out, wait = inside
__next__, a switch's start-up inside the wait of its call; the ledger's exploration cost."""

from autotune.online.meter import Ledger, Meter


class Ticks:
    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_step_wait_and_startup():
    meter = Meter(Ticks(0.0, 1.0, 1.5, 2.0, 2.25, 4.0, 4.5))
    meter.enter()          # 0.0
    first = meter.handed_out()   # 1.0
    meter.enter()          # 1.5: the loop's own work took 0.5 s
    meter.switching()      # 2.0: a switch starts inside this call
    second = meter.handed_out()  # 2.25
    meter.enter()          # 4.0
    third = meter.handed_out()   # 4.5
    assert first.step_s is None and first.wait_s == 1.0 and first.startup_s is None
    assert second.step_s == 1.25 and second.wait_s == 0.75 and second.startup_s == 0.25
    assert second.segment_step == 0 and third.segment_step == 1
    assert third.step_s == 2.25 and third.wait_s == 0.5 and third.startup_s is None
    assert meter.wait_s == 2.25 and meter.startup_s == 0.25 and meter.count == 3


def test_no_step_across_an_epoch_boundary():
    meter = Meter(Ticks(0.0, 1.0, 10.0, 10.5))
    meter.enter()
    meter.handed_out()
    meter.epoch_ended()  # evaluation between epochs is not a step
    meter.enter()
    assert meter.handed_out().step_s is None


def test_ledger_cost_against_the_best():
    ledger = Ledger()
    meter = Meter(Ticks(0.0, 0.1, 0.1, 0.4, 0.4, 0.5))
    for exploring in (True, True, False):
        meter.enter()
        ledger.add(meter.handed_out(), exploring)
    assert ledger.explore_steps == 2 and ledger.tuned_steps == 1
    # 0.1 s (first batch's wait) + 0.3 s explored against 0.1 s steps: 0.2 s lost
    assert abs(ledger.cost_s(0.1) - 0.2) < 1e-9
    assert ledger.cost_s(None) == 0.0
