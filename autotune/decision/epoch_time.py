"""An epoch's time is its steady time plus its restart cost: one configuration's rate over whole
epochs, predicted from parts measured under either persistence setting.

An epoch of S samples (or steps: any unit the steady rate shares) at the steady rate R, the rate
once its pool runs (a burst's window with any boundary it crossed taken out, the climb's steady
windows), takes

    epoch time = S / R + restart            epoch rate = S / epoch time

where `restart` is what the epoch's boundary costs over a steady step: without persistent_workers
a fresh pool's start-up (its processes, each worker's first-item opens: a file handle, a database
connection) at every epoch; with them the idle pool's refill alone, its start-up paid once per
training and not per epoch.

Every pool that starts measures a fresh start-up, persistent or not, and every window a steady
rate; so a configuration measured without persistent workers predicts its persistent twin and the
other way round. Worker counts are compared at one persistence setting (`shared_setting`,
`EpochParts.rate`), never a rate that paid a restart every epoch against one that did not.

Assumes the steady rate does not depend on persistence (the same workers, once running), that a
refill never measured costs nothing beside a fresh start-up, and that a start-up never measured
costs nothing (the rate is then the steady one, as where the epoch's length is unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from autotune.decision.verdict import persistence_matters


def epoch_rate(steady: float, epoch_size: float | None, restart_s: float) -> float:
    """S / (S / R + restart): the steady rate with one restart per epoch; the steady rate where
    the length is unknown or nothing is paid."""
    if not epoch_size or epoch_size <= 0 or steady <= 0 or restart_s <= 0:
        return steady
    return epoch_size / (epoch_size / steady + restart_s)


def steady_of(rate: float, epoch_size: float | None, restart_s: float) -> float:
    """The inverse: the steady rate that, with `restart_s` once an epoch, gives the rate measured
    over whole epochs (`rate` where the restart would take the whole epoch: not separable)."""
    if not epoch_size or rate <= 0 or restart_s <= 0 or epoch_size / rate <= restart_s:
        return rate
    return epoch_size / (epoch_size / rate - restart_s)


@dataclass(frozen=True)
class EpochParts:
    """One configuration's measured parts. The restarts are seconds over a steady step; None
    where never measured."""

    steady: float  # samples/s (or steps/s) once the pool runs
    fresh_restart_s: float | None  # a fresh pool's start-up: paid every epoch without persistence
    refill_s: float | None  # a persistent pool's refill: paid every epoch with it
    epoch_size: float | None  # samples (or steps) per epoch; None: the length is unknown
    persistent: bool  # the setting it was measured under

    def restart_s(self, persistent: bool) -> float:
        return (self.refill_s if persistent else self.fresh_restart_s) or 0.0

    def epoch_s(self, persistent: bool) -> float | None:
        if not self.epoch_size or self.steady <= 0:
            return None
        return self.epoch_size / self.steady + self.restart_s(persistent)

    def rate(self, persistent: bool) -> float:
        """The predicted rate over whole epochs under `persistent`."""
        return epoch_rate(self.steady, self.epoch_size, self.restart_s(persistent))

    def in_samples(self, batch_size: int) -> EpochParts:
        """The same parts in samples, where they were in steps of `batch_size` samples."""
        size = None if self.epoch_size is None else self.epoch_size * batch_size
        return replace(self, steady=self.steady * batch_size, epoch_size=size)

    @property
    def restart_share(self) -> float | None:
        """A fresh pool's start-up as a share of an epoch without persistent workers; None where
        the length or the start-up is unknown."""
        epoch_s = self.epoch_s(False)
        if epoch_s is None or self.fresh_restart_s is None:
            return None
        return self.fresh_restart_s / epoch_s

    @property
    def restart_matters(self) -> bool | None:
        """persistence_matters (decision/verdict.py) on its fresh start-up against its epoch."""
        return persistence_matters(self.fresh_restart_s, self.epoch_s(False))


def shared_setting(parts: Iterable[EpochParts]) -> bool | None:
    """The persistence setting at which worker counts are compared: None (each rate as measured)
    where no configuration's restart matters, so that a workload with negligible restarts is read
    as before; else persistent_workers=True where any configuration was measured with it (the
    setting the choice then takes), False where none was (the rates already share it)."""
    parts = list(parts)
    if not any(p.restart_matters for p in parts):
        return None
    return any(p.persistent for p in parts)


def window_rules_out(config_persistent: bool, workers: int, parts: Iterable[EpochParts]) -> bool:
    """Whether a burst's running rate may rule its configuration out (pruning): not where it runs
    without persistent workers and some configuration's restart matters. Its window pays restarts
    that its persistent twin would not, and its steady rate, which predicts that twin, is the
    evidence the worker counts are compared on: a burst cut short measures neither."""
    if config_persistent or workers == 0:
        return True
    return not any(p.restart_matters for p in parts)


def rate_at(parts: EpochParts, setting: bool | None, measured: float) -> float:
    """A configuration's rate as worker evidence: `measured` where the setting is None (restarts
    negligible), else the prediction under `setting`."""
    return measured if setting is None else parts.rate(setting)
