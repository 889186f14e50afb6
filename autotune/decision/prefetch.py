"""The prefetch depth a pool is first measured at: the online climb's jump, the offline seeds.

Every epoch starts with an empty pool, persistent or not, and a loop that waits for the epoch's
first batch: batches are handed out in order. iter() gives the pool workers x prefetch_factor
indices at once. With a deeper queue each worker goes on to its next item as soon as its first
is made, and where the workers share the cores, those later items take CPU from the first ones
the loop is waiting for; with a queue one deep, a worker's next item is sent as the loop takes a
batch. Over a long epoch that refill is paid once in many steps, and a deeper queue rides out the
convoys of workers waiting on storage (the climb's next step when the pool still starves the
loop). Where epochs are short, the refill is paid every few steps: the shallowest depth goes
first (results/bench/prefetch-short-epochs).

Assumes the refill is the part of a short epoch that the depth changes: the steady rate inside an
epoch is the workers', whatever the depth, once they are running.
"""

from __future__ import annotations

from typing import Sequence


def first_depth(whole_epochs: bool, depths: Sequence[int], current: int | None) -> int | None:
    """The depth of a pool's first measurement: the shallowest of `depths` where that
    measurement is of whole epochs (an epoch too short to hold a window of its own: the online
    climb's windows, ClimbSettings.whole_epochs; a burst, burst/epoch_window.py), else `current`
    (None: torch's default). The one parameter the two drivers differ in is how they tell."""
    return min(depths) if whole_epochs and depths else current
