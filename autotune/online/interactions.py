"""What the online report says of the knobs the climb judged together: why its choice keeps
persistent_workers or not, and, in the offline report's words (diagnosis/epochs.py), which
interaction decided the worker count (compared at one persistence setting) and the prefetch depth
(over whole epochs, each refilling the pool). Imported when a report is written, never before a
rank's first batch: it brings the diagnosis package."""

from __future__ import annotations

from dataclasses import dataclass

from autotune.decision.epoch_time import EpochParts
from autotune.decision.thresholds import MATTERS_SHARE
from autotune.diagnosis.epochs import KNOB, Chosen, interactions
from autotune.online.climb_types import Persisted, PersistenceCall
from autotune.online.measurement import Measurement
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig


@dataclass(frozen=True)
class Windows:
    """A configuration the climb measured, as diagnosis reads a trial (diagnosis/measured.py):
    the rate its report row shows, and its parts for the epoch model, in samples."""

    config: LoaderConfig
    samples_per_s: float | None
    span_s: float | None
    epoch_parts: EpochParts | None
    ok: bool = True


def windows(climb: HillClimb, batch_size: int) -> list[Windows]:
    return [
        Windows(m.config, m.shown_mean * batch_size, sum(m.spans), _parts(climb, m, batch_size))
        for m in climb.measured.values()
        if m.n and not m.failed and m.shown_mean > 0
    ]


def _parts(climb: HillClimb, m: Measurement, batch_size: int) -> EpochParts:
    return climb.epoch_parts(m).in_samples(batch_size)


def lines(climb: HillClimb, config: LoaderConfig, batch_size: int) -> list[str]:
    """The knobs judged together behind `config` (the choice, or the best so far): none where
    the climb measured nothing of it."""
    m = climb.measurement_of(config)
    if m is None or not m.n or m.shown_mean <= 0:
        return []
    steps = climb.settings.epoch_steps
    call = climb.persistence(m.config)
    # After autotune's own error the loader stays where it was, whatever the call said.
    head = (
        [persistence_line(call, config.num_workers, steps)]
        if call is not None and call.keep == config.persistent_workers
        else []
    )
    chosen = Chosen(
        config, _parts(climb, m, batch_size), steps, climb.settings.windowed_by_epoch(config)
    )
    return head + interactions(chosen, windows(climb, batch_size))


def persistence_line(call: PersistenceCall, workers: int, epoch_steps: int | None) -> str:
    """Why persistent_workers is what the choice runs with."""
    setting = f"{KNOB}={call.keep}"
    if call.why is Persisted.SCRIPT:
        return f"{setting}: the script's own setting, kept"
    if call.startup_s is None or call.epoch_s is None:
        unknown = "the loader has no length" if epoch_steps is None else "no start-up was measured"
        return f"{setting}: {unknown}, and a restart of the workers is never cheaper than none"
    share = call.startup_s / call.epoch_s
    start = (
        f"a fresh pool of {workers} workers starts in {call.startup_s:.2f} s; a {epoch_steps}-step"
        f" epoch takes {call.epoch_s:.2f} s at its rate"
    )
    if call.why is Persisted.MATTERS:
        return f"{setting}: {start}, so every epoch would pay {share:.0%} more without it"
    return (
        f"{setting}: {start}; the restart, {share:.1%} of it, is under the {MATTERS_SHARE:.0%}"
        " at which a restart matters"
    )
