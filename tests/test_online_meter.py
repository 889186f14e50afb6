"""The meter's definitions, on a fake clock: step = between batches handed out, wait = inside
__next__, a switch's start-up inside the wait of its call; the ledger's exploration cost."""

from autotune.online.meter import Ledger, Meter, Step


class Ticks:
    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_step_wait_and_startup():
    meter = Meter(Ticks(0.0, 1.0, 1.5, 2.0, 2.25, 4.0, 4.5))
    meter.enter()  # 0.0
    first = meter.handed_out()  # 1.0
    meter.enter()  # 1.5: the loop's own work took 0.5 s
    meter.switching()  # 2.0: a switch starts inside this call
    second = meter.handed_out()  # 2.25
    meter.enter()  # 4.0
    third = meter.handed_out()  # 4.5
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


def test_the_epoch_step_counts_every_batch_handed_out_and_restarts_with_the_epoch():
    """Switches restart the segment, not the epoch: the policy reads an epoch's last batch from
    it, whichever batches it observed (a DDP leader skips those before an announced switch)."""
    meter = Meter(Ticks(*range(20)))
    steps = []
    for switch in (False, True, False):
        meter.enter()
        if switch:
            meter.switching()
        steps.append(meter.handed_out())
    meter.epoch_ended()
    meter.enter()
    steps.append(meter.handed_out())
    assert [s.epoch_step for s in steps] == [0, 1, 2, 0]
    assert [s.segment_step for s in steps] == [0, 0, 1, 2]


def test_ledger_cost_against_the_best():
    ledger = Ledger()
    # Handed out at 0.1 (wait 0.1), 0.5, 0.8, 1.1 and 1.2 s; the loop's own work takes no time.
    meter = Meter(Ticks(0.0, 0.1, 0.1, 0.5, 0.5, 0.8, 0.8, 1.1, 1.1, 1.2))
    for exploring in (True, True, True, True, False):
        meter.enter()
        ledger.add(meter.handed_out(), exploring)
    assert ledger.explore_steps == 4 and ledger.tuned_steps == 1
    # The run's start (0.1 + 0.4 s) is no cost; then 0.3 + 0.3 s explored against 0.1 s steps.
    assert ledger.start_steps == 2 and abs(ledger.start_s - 0.5) < 1e-9
    assert abs(ledger.cost_s(0.1) - 0.4) < 1e-9
    assert ledger.cost_s(None) == 0.0


def test_the_scripts_first_training_step_is_no_exploration_cost():
    """A first step of 12 s (cudnn autotuning, lazy initialisation) between the first and second
    batches is paid under any configuration: exploring's cost leaves it out."""
    ledger = Ledger()
    meter = Meter(Ticks(0.0, 0.5, 12.5, 12.5, 12.55, 12.6, 12.65, 12.7))
    for _ in range(4):
        meter.enter()
        ledger.add(meter.handed_out(), exploring=True)
    assert abs(ledger.cost_s(0.05) - 0.1) < 1e-9  # 0.1 s over two 0.05 s steps, not 12.6 s


def test_cpu_times_of_the_fetch_and_of_the_work():
    wall = Ticks(0.0, 1.0, 3.0, 4.0)
    # The process's CPU at enter() and at each hand-out: all threads', torch's intra-op ones too
    # (a fetch at num_workers=0 may take more CPU than wall time).
    process = Ticks(10.0, 10.25, 11.75, 13.75)
    meter = Meter(wall, process)
    meter.enter()
    first = meter.handed_out(backlog=3)
    meter.enter()
    second = meter.handed_out()
    assert first.wait_cpu_s == 0.25 and first.work_cpu_s == 0.0  # no work before the first
    assert second.wait_cpu_s == 2.0 and second.work_cpu_s == 1.5
    assert first.backlog == 3 and second.backlog is None


def _steps(step_s, wait_s, backlogs):

    return [Step(i, step_s, wait_s, i, None, backlog=b) for i, b in enumerate(backlogs)]


def test_a_window_that_drains_the_buffer_reads_what_the_loader_produced():
    from autotune.online.measurement import window_rate

    # 9 steps of 50 ms, no wait, while the buffer drains from 18 ready batches to 10: the 8
    # batches taken between the first hand-out and the last all came from stock, none was made.
    assert abs(window_rate(_steps(0.05, 0.0, [18, 17, 16, 15, 14, 13, 12, 11, 10]))[0] - 0.0) < 1e-9
    drained_half = [18, 18, 17, 17, 16, 16, 15, 15, 14]  # 4 from stock, 4 made: 10 batches/s
    assert abs(window_rate(_steps(0.05, 0.0, drained_half))[0] - 10.0) < 1e-9
    # Backlog level: the step's own rate; unknown backlog: batches over the step time.
    assert abs(window_rate(_steps(0.05, 0.0, [4] * 9))[0] - 20.0) < 1e-9
    assert abs(window_rate(_steps(0.05, 0.0, [None] * 8))[0] - 20.0) < 1e-9


def test_a_loader_faster_than_the_step_is_read_at_the_steps_rate():
    from autotune.online.measurement import window_rate

    # The buffer grows by a batch a step: production is 40 batches/s, the step takes only 20.
    assert abs(window_rate(_steps(0.05, 0.0, list(range(9))))[0] - 20.0) < 1e-9


def test_a_measurements_mean_is_its_batches_over_its_time():
    """Two windows of 8 batches, one over 0.2 s and one over 0.6 s: 16 batches in 0.8 s is 20
    batches/s, where the mean of their rates (40 and 13.3) would read 26.7."""
    from autotune.online.measurement import Measurement
    from autotune.space.config import LoaderConfig

    m = Measurement(LoaderConfig())
    for step_s in (0.025, 0.075):
        for i in range(8):
            done = m.add(Step(i, step_s, 0.0, i, None), least=8)
        assert done
    assert abs(m.mean - 20.0) < 1e-9
    m.remeasure()  # the windows before a re-measurement are left out of the mean
    assert m.mean == 0.0 and m.n == 0


def test_windows_hold_no_first_steps_start_up_or_buffered_batches():
    """The rate a configuration is judged on is its steady step's, however slow the run's first
    steps (lazy initialisation), its own start-up, or fast the batches its workers buffered."""
    from autotune.online.climb_types import ClimbSettings
    from autotune.online.options import TUNED
    from autotune.online.policy import HillClimb
    from autotune.space.config import LoaderConfig

    climb = HillClimb(
        LoaderConfig(), TUNED, ClimbSettings(epoch_steps=10_000, usable_cpus=2, cuda=False)
    )
    now = [0.0]
    meter = Meter(lambda: now[0], lambda: 0.0)
    # (wait, work) of a steady step by worker count: at w0 the fetch is the wait
    steady = {0: (0.080, 0.020), 5: (0.006, 0.014)}
    switched = False
    for n in range(60):
        config = climb.current
        meter.enter()
        if switched:
            meter.switching()
            now[0] += 1.0  # the new workers' start-up
        elif n < 5:
            now[0] += 1.0  # lazy initialisation in the run's first steps
        depth = config.prefetch_depth
        buffered = switched is False and 0 < meter._segment_step <= depth
        wait, work = steady[min(config.num_workers, 5)]  # more workers wait as long as 5
        now[0] += 0.0 if buffered else wait
        step = meter.handed_out()
        now[0] += work  # the loop's own work is the same, buffered batch or not
        switched = climb.observe(step) is not None
    start = climb.measured[LoaderConfig()]
    assert start.n == 1 and abs(start.mean - 10.0) < 1e-9
    w5 = next(m for c, m in climb.measured.items() if c.num_workers == 5)
    assert w5.n >= 1 and abs(w5.mean - 50.0) < 1e-9
    assert abs(start.wait_share - 0.8) < 1e-9
