"""The window's end rule and rate, on marks given by hand (no clock, no loader)."""

import pytest

from autotune.burst.window import Mark, balanced, next_mark, span_rate, window_complete, window_rate

RULES = dict(min_steps=4, min_seconds=0.1, tolerance=0.10)


def marks(step_s: list[float], backlogs: list[int | None], batch: int = 16) -> list[Mark]:
    """One mark per step: `step_s[i]` seconds after the previous, backlog as given."""
    out = [Mark(0.0, 0, backlogs[0])]
    for dt, level in zip(step_s, backlogs[1:], strict=True):
        out.append(Mark(out[-1].t + dt, out[-1].samples + batch, level))
    return out


def test_a_window_that_consumes_a_backlog_is_credited_only_with_what_was_produced():
    # 10 steps of 16 samples in 0.5 s, but 6 of those batches were ready before the window began.
    window = marks([0.05] * 10, [8] + [7, 6, 5, 4, 3, 2, 2, 2, 2, 2])
    assert window_rate(window) == pytest.approx((10 - 6) * 16 / 0.5)


def test_a_window_that_leaves_batches_in_the_buffer_is_credited_with_them():
    window = marks([0.1] * 10, [0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4])
    assert window_rate(window) == pytest.approx((10 + 4) * 16 / 1.0)


def test_an_unknown_backlog_counts_consumption_alone():
    window = marks([0.05] * 10, [None] * 11)
    assert window_rate(window) == pytest.approx(160 / 0.5)
    assert balanced(window)


def test_a_production_rate_is_never_negative():
    window = marks([0.01] * 2, [30, 0, 0])
    assert span_rate(window, 0, 2) == 0.0


def test_the_window_is_long_relative_to_the_batches_in_flight():
    steady = marks([0.05] * 20, [3] * 21)
    assert window_complete(steady, depth=8, **RULES)
    assert not window_complete(steady, depth=32, **RULES)  # 20 steps < 32 batches in flight


def test_the_window_ends_only_where_the_backlog_is_back_to_its_start():
    # A convoy: the buffer fills behind a starved worker, then empties in a rush.
    convoy = marks([0.05] * 12, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 24])
    assert not window_complete(convoy, depth=4, **RULES)
    back = marks([0.05] * 24, [2, 3] * 12 + [3])
    assert window_complete(back, depth=4, **RULES)


def test_halves_that_disagree_are_not_steady():
    uneven = marks([0.1] * 5 + [0.02] * 5, [1] * 11)
    assert not window_complete(uneven, depth=1, **RULES)
    assert window_rate(uneven) == pytest.approx(160 / 0.6)  # counted whole when the cap ends it


def waited(window: list[Mark], per_step: list[float]) -> list[Mark]:
    """The same marks with the loop's cumulative wait: `per_step[i]` seconds in step i."""
    total, out = 0.0, [Mark(window[0].t, 0, window[0].backlog, 0.0)]
    for mark, wait in zip(window[1:], per_step, strict=True):
        total += wait
        out.append(Mark(mark.t, mark.samples, mark.backlog, total))
    return out


def test_a_buffer_filling_behind_a_step_that_never_waits_is_no_throughput():
    # The loader outpaces a 0.1 s step: the buffer gains 4 batches, the loop never waits. The step
    # sets the pace; the surplus in the buffer would be consumed no faster.
    window = waited(marks([0.1] * 10, [0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4]), [0.0] * 10)
    assert window_rate(window) == pytest.approx(160 / 1.0)


def test_a_loop_that_waited_is_held_to_what_the_loader_produced():
    # Waiting 0.3 s of 1 s, the loop could take 160 / 0.7 s; the loader made 10 + 4 batches.
    window = waited(marks([0.1] * 10, [0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4]), [0.03] * 10)
    assert window_rate(window) == pytest.approx((10 + 4) * 16 / 1.0)
    # Draining a backlog the loader made before the window: production, whatever the waits.
    drained = waited(marks([0.05] * 10, [8] + [7, 6, 5, 4, 3, 2, 2, 2, 2, 2]), [0.0] * 10)
    assert window_rate(drained) == pytest.approx((10 - 6) * 16 / 0.5)


def pulled(step_s: list[float], wait_s: list[float], backlogs: list[int | None]) -> list[Mark]:
    """Marks as the burst runner makes them (next_mark): step i took step_s[i], wait_s[i] of it
    inside the pull; backlogs[i] is read after step i (backlogs[0] at the window's start)."""
    out = [next_mark([], 0.0, 0, backlogs[0], 0.0)]
    for dt, wait, level in zip(step_s, wait_s, backlogs[1:], strict=True):
        last = out[-1]
        out.append(next_mark(out, last.t + dt, last.samples + 16, level, last.waited + wait))
    return out


def test_a_ready_batchs_hand_over_is_the_loops_work_not_waiting():
    # A 20 ms step behind a full buffer: every pull finds a batch and takes 1.5 ms to receive it.
    # The loader fills the buffer (4 batches more at the end), the loop never waits for it: the
    # rate is what the loop consumed, not 16 / 20 ms (hand-over counted as waiting: 800 samples/s).
    window = pulled([0.0215] * 10, [0.0015] * 10, [4, 5, 5, 6, 6, 7, 7, 8, 8, 8, 8])
    assert window_rate(window) == pytest.approx(160 / 0.215)


def test_a_pull_that_found_the_buffer_empty_waited_for_the_loader():
    # Half the pulls find the buffer empty and wait 30 ms; the loader made 10 + 4 batches, and
    # the loop, had it not waited, could have taken more than that: production decides.
    window = pulled([0.05] * 10, [0.03, 0.0] * 5, [0, 1, 0, 1, 0, 1, 0, 1, 0, 3, 4])
    produced = (10 + 4) * 16 / 0.5
    capacity = 160 / (0.5 - 5 * 0.03)
    assert window_rate(window) == pytest.approx(min(produced, capacity))
    # Where the backlog cannot be read, every wait counts, as before.
    unknown = pulled([0.05] * 10, [0.03, 0.0] * 5, [None] * 11)
    assert window_rate(unknown) == pytest.approx(160 / 0.5)
