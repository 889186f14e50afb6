"""The online report names the knobs the climb judged together, in the offline report's words
(diagnosis/epochs.py): why persistent_workers is kept or not, the worker counts compared at one
persistence setting, and the prefetch depth over whole epochs. Fake windows, no clock."""

from __future__ import annotations

from autotune.decision.epoch_time import epoch_rate
from autotune.online.climb_types import ClimbSettings, Persisted, PersistenceCall
from autotune.online.finish import TOGETHER, report
from autotune.online.interactions import lines, persistence_line
from autotune.online.measurement import Measurement
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig

BATCH, EPOCH_STEPS = 16, 30


def w(workers: int, prefetch: int = 2, persist: bool = False) -> LoaderConfig:
    return LoaderConfig(
        num_workers=workers,
        prefetch_factor=prefetch if workers else None,
        persistent_workers=persist and workers > 0,
    )


def measured(config: LoaderConfig, rates: list[float], startup_s: float) -> Measurement:
    m = Measurement(config, startup_s=startup_s)
    m.rates, m.spans = list(rates), [EPOCH_STEPS / r for r in rates]
    return m


def climb_of(start: LoaderConfig, *ms: Measurement, epoch_steps: int | None = EPOCH_STEPS):
    settings = ClimbSettings(epoch_steps=epoch_steps, usable_cpus=2, cuda=False, min_windows=2)
    climb = HillClimb(start, TUNED, settings)
    climb.measured = {m.config: m for m in ms}
    climb.best = max(ms, key=lambda m: m.mean)
    return climb


def test_short_epochs_name_persistence_the_worker_counts_at_one_setting_and_the_depth():
    # 30-step epochs of 0.6 s at 50 batches/s; a fresh pool of 4 or 6 workers starts in 0.3 s.
    start = measured(w(4), [epoch_rate(50.0, EPOCH_STEPS, 0.3)] * 2, 0.3)
    four = measured(w(4, 1, persist=True), [50.0, 50.2], 0.3)
    deep = measured(w(4, 2, persist=True), [47.0, 47.1], 0.3)
    six = measured(w(6, 1, persist=True), [44.0, 44.1], 0.3)
    climb = climb_of(w(4), start, four, deep, six)
    assert climb.settings.whole_epochs and climb.best is four
    said = lines(climb, four.config, BATCH)
    assert said[0] == (
        "persistent_workers=True: a fresh pool of 4 workers starts in 0.30 s; a 30-step epoch"
        " takes 0.60 s at its rate, so every epoch would pay 50% more without it"
    )
    assert said[1] == (
        "persistent_workers: the restart of 4 workers costs 33% of a 30-step epoch without it;"
        " compared at persistent_workers=True, 4 workers beat 6 (802 against 705 samples/s)"
    )
    assert said[2] == (
        "prefetch_factor: each 30-step epoch refills the pool (4 workers x 1 batches sent at"
        " once); with the other settings alike, prefetch_factor=1 beat 2 (802 against 753"
        " samples/s over whole epochs)"
    )
    text = report(climb, "x", "line", BATCH, None, four.config)
    assert text.endswith(f"{TOGETHER}\n\n" + "".join(f"- {x}\n" for x in said))


def test_a_cheap_restart_over_long_epochs_says_so_and_compares_nothing_across_settings():
    long = 3000
    start = measured(w(0), [40.0, 40.0], 0.0)
    four = measured(w(4), [100.0, 100.2], 0.2)
    climb = climb_of(w(0), start, four, epoch_steps=long)
    assert not climb.settings.whole_epochs
    [said] = lines(climb, w(4), BATCH)
    assert said == (
        "persistent_workers=False: a fresh pool of 4 workers starts in 0.20 s; a 3000-step"
        " epoch takes 29.97 s at its rate; the restart, 0.7% of it, is under the 2% at which a"
        " restart matters"
    )
    assert TOGETHER in report(climb, "x", "line", BATCH, None, w(4))
    # Without workers there is nothing judged together, and the report has no such section.
    alone = climb_of(w(0), start)
    assert lines(alone, w(0), BATCH) == []
    assert TOGETHER not in report(alone, "x", "line", BATCH, None, w(0))


def test_each_persistence_call_reads_as_its_reason():
    script = PersistenceCall(True, Persisted.SCRIPT, 0.1, 10.0)
    assert persistence_line(script, 4, 30) == (
        "persistent_workers=True: the script's own setting, kept"
    )
    unknown = PersistenceCall(True, Persisted.UNKNOWN, 0.5, None)
    assert persistence_line(unknown, 4, None) == (
        "persistent_workers=True: the loader has no length, and a restart of the workers is"
        " never cheaper than none"
    )
    assert "no start-up was measured" in persistence_line(
        PersistenceCall(True, Persisted.UNKNOWN, None, 2.0), 4, 30
    )


def test_the_call_is_the_one_the_choice_takes():
    # What the report says of persistence is what the climb decided, never a second rule.
    start = measured(w(4), [epoch_rate(50.0, EPOCH_STEPS, 0.3)] * 2, 0.3)
    climb = climb_of(w(4), start)
    call = climb.persistence(w(4))
    assert call is not None and call.why is Persisted.MATTERS
    assert climb.choice_so_far().persistent_workers is call.keep is True
    assert climb.persistence(w(0)) is None
