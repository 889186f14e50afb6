"""What an epoch boundary costs a configuration, and the rate it sustains over whole epochs.

A training loop re-iterates its loader at every epoch. The epoch's first batch then comes
`first_batch_s` after iter(): without persistent_workers, from fresh worker processes (start,
their first-use start-up such as opening files, one batch each), as the burst's own start-up
measures; with them, from the idle pool's refill (one batch's latency), measured by re-iterating
the persistent loader once. In the steady state a batch comes every `step_s`, so a boundary
costs `first_batch_s - step_s` more. Over an epoch of S samples at the steady rate R:

    epoch time = S / R + restart cost        epoch rate = S / epoch time

A persistent pool's first start-up is paid once per training, not per epoch: it is recorded
(the burst's start-up) but not counted here. Where the epoch's length is unknown (an iterable
dataset without __len__) no boundary is counted: the epoch rate is the steady rate, and the
report says so. An epoch too short for a window inside it is measured whole (epoch_window.py):
its rate is then the one measured, and the model above only splits it into steady rate and cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune.burst.epoch_window import WholeEpochs
from autotune.decision import epoch_time

# A window that crossed boundaries keeps at least this share of its time as steady: the restart
# cost comes from another measurement and must not wipe the window out if it overshoots.
MIN_STEADY_SHARE = 0.25


@dataclass(frozen=True)
class EpochLength:
    batches: int | None  # len(loader); None where the loader has no length
    samples: int | None

    @property
    def known(self) -> bool:
        return self.samples is not None and self.samples > 0


def epoch_length(loader: Any, batch_size: int) -> EpochLength:
    """Batches and samples in one pass over `loader`: len(loader) batches, at most the dataset's
    items (the last batch may be partial)."""
    try:
        batches = len(loader)
    except TypeError:
        return EpochLength(None, None)
    samples = batches * batch_size
    try:
        samples = min(samples, len(loader.dataset))
    except (TypeError, AttributeError):
        pass  # no dataset length: full batches assumed
    return EpochLength(batches, samples)


def restart_cost_s(first_batch_s: float, steady_samples_per_s: float, batch_size: int) -> float:
    """An epoch boundary's cost over a steady step: the epoch's first batch minus one step."""
    if steady_samples_per_s <= 0:
        return 0.0
    return max(0.0, first_batch_s - batch_size / steady_samples_per_s)


def steady_rate(window_rate: float, window_s: float, boundaries: int, cost_s: float) -> float:
    """The window's rate without the `boundaries` it crossed (each cost `cost_s`), so that they
    are not counted twice once the epoch rate adds them back."""
    if boundaries <= 0 or cost_s <= 0 or window_s <= 0:
        return window_rate
    steady_s = max(window_s - boundaries * cost_s, MIN_STEADY_SHARE * window_s)
    return window_rate * window_s / steady_s


def epoch_rate(steady_samples_per_s: float, length: EpochLength, cost_s: float) -> float:
    """Samples/s over whole epochs: the steady rate with one restart per epoch
    (decision/epoch_time.py)."""
    return epoch_time.epoch_rate(
        steady_samples_per_s, length.samples if length.known else None, cost_s
    )


@dataclass(frozen=True)
class EpochCost:
    """One configuration's epoch figures, as a burst measured them."""

    steady_samples_per_s: float
    samples_per_s: float  # over whole epochs
    first_batch_s: float
    restart_cost_s: float  # per epoch boundary
    length: EpochLength


def whole_epoch_cost(whole: WholeEpochs, length: EpochLength) -> EpochCost:
    """Epoch figures from whole epochs measured in the window (epoch_window.py): the rate is
    theirs; a boundary costs its step interval over the others', and the steady rate is the one
    that, with that cost once an epoch, gives the measured rate."""
    cost = max(0.0, whole.boundary_step_s - whole.step_s)
    samples = length.samples if length.known else None
    steady = epoch_time.steady_of(whole.samples_per_s, samples, cost)
    return EpochCost(steady, whole.samples_per_s, whole.boundary_step_s, cost, length)


def epoch_cost(
    window_rate: float,
    window_s: float,
    boundaries: int,
    first_batch_s: float,
    batch_size: int,
    length: EpochLength,
) -> EpochCost:
    # The cost is judged against the window's own step first; a window that crossed boundaries
    # then has them taken out, and the cost is judged again against the steadier step.
    cost = restart_cost_s(first_batch_s, window_rate, batch_size)
    steady = steady_rate(window_rate, window_s, boundaries, cost)
    cost = restart_cost_s(first_batch_s, steady, batch_size)
    return EpochCost(steady, epoch_rate(steady, length, cost), first_batch_s, cost, length)
