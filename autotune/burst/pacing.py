"""The steps around a burst's timed window: settling into the steady state, placing the window
in its epoch, a persistent pool's refill, and draining a loader measured alone."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator

from autotune.burst.backlog import ready_batches
from autotune.burst.epoch_window import EpochPlace

# A pull that takes this long found the buffer empty: the workers are now the ones being waited on.
DRAINED_PULL_S = 0.002
# How often the restart measurement checks whether the pool has finished the tasks in flight.
IDLE_POLL_S = 0.005


def settle(
    batches: Iterator[Any],
    run_step: Callable[[Any], None],
    backlog: Callable[[], int | None],
    depth: int,
    limit_s: float,
) -> None:
    """Real steps until `depth` batches have gone through since warm-up, so the window starts in
    the loader's steady state, at most `limit_s` (half the window's cap: the budget plans on it).
    A buffer still full after the warm-up steps is already steady: the consumer, not the loader,
    sets the pace."""
    level = backlog()
    if level is not None and level >= depth - 1:
        return
    t0 = time.perf_counter()
    for _ in range(depth):
        if time.perf_counter() - t0 >= limit_s:
            return
        run_step(next(batches))


def to_middle(
    batches: Iterator[Any],
    run_step: Callable[[Any], None],
    place: EpochPlace,
    position: Callable[[], int],
    room: int,
    limit_s: float,
) -> None:
    """Real steps until the next batch lies in its epoch's middle with `room` batches before the
    tail (epoch_window.py), at most `limit_s`."""
    if place.batches is None:
        return
    t0 = time.perf_counter()
    while (
        not place.middle((position() + 1) % place.batches, room)
        and time.perf_counter() - t0 < limit_s
    ):
        run_step(next(batches))


def persistent_pool(loader: Any) -> bool:
    return (
        bool(getattr(loader, "persistent_workers", False)) and getattr(loader, "num_workers", 0) > 0
    )


def refill_s(loader: Any, limit_s: float) -> float:
    """A persistent pool's epoch restart: once the tasks in flight are done (at a real epoch end
    nothing is outstanding, so the refill starts from idle workers, at most `limit_s` waited for),
    iter() on the loader again and the seconds to its first batch."""
    iterator = getattr(loader, "_iterator", None)
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        ready, outstanding = ready_batches(iterator), getattr(iterator, "_tasks_outstanding", None)
        if ready is None or outstanding is None or ready >= outstanding:
            break
        time.sleep(IDLE_POLL_S)
    t0 = time.perf_counter()
    next(iter(loader))
    return time.perf_counter() - t0


def drain_prefetched(batches: Iterator[Any], depth: int) -> None:
    """For a loader measured alone (no step): pull ready batches without stepping until a pull
    has to wait, at most `depth` of them."""
    fastest = float("inf")
    for _ in range(depth):
        t0 = time.perf_counter()
        next(batches)
        pull = time.perf_counter() - t0
        if pull > DRAINED_PULL_S and pull > 3 * fastest:
            return
        fastest = min(fastest, pull)
