"""The online climb's vocabulary: the knobs it tunes, its settings, the verdicts it reaches and why
it stops, and the configuration helpers the loader and the plan share."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from autotune.decision.worker_range import Fits, WorkerRange, any_fits
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME
from autotune.strenum import StrEnum

WORKER_LADDER = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
UNCAPPED = 1 << 16  # a prediction's cap where only the cores may bound it
# The start is measured this many windows: enough to predict from, and a start far from the
# best is the costliest configuration to linger on.
START_WINDOWS = 1
# A window's least steps at num_workers=0 (window_s still applies): the fetch runs inside
# `__next__`, one batch at a time, so there is no convoy to span. The script's start is usually
# there and often the slowest configuration: on deep-storage its 8-step window of 240 ms steps
# cost 1.7 s against the best (online-confirm/trace.py, on the policy before).
SYNC_WINDOW_STEPS = 3


class RamReader(Protocol):
    """The cost order's RAM of the configuration running (pool_memory.RamReading): a reading
    started (False: none is taken), waited for (at most `timeout_s`), and its value once done."""

    def start(self, config: LoaderConfig) -> bool: ...

    def wait(self, timeout_s: float) -> None: ...

    def value(self, config: LoaderConfig) -> float | None: ...


class NoRamReading:
    """No RAM read: the cost order goes without it."""

    def start(self, config: LoaderConfig) -> bool:
        return False

    def wait(self, timeout_s: float) -> None:
        pass

    def value(self, config: LoaderConfig) -> float | None:
        return None


class PoolCpu(Protocol):
    """The running pool's workers' CPU (pool_cpu.WorkersCpu): `start` finds the pool that has just
    started and reads it, `read` reads it again; each reading is (the workers' CPU seconds so far,
    the wall clock), None where it cannot be read (a worker exited, no pool)."""

    def start(self) -> tuple[float, float] | None: ...

    def read(self) -> tuple[float, float] | None: ...


class NoPoolCpu:
    """No workers' CPU read: a pool's measurement predicts nothing for its neighbours."""

    def start(self) -> tuple[float, float] | None:
        return None

    def read(self) -> tuple[float, float] | None:
        return None


class StopReason(StrEnum):
    RESOLVED = "resolved within the measured noise"
    BOUND = "exploration bound reached"
    EPOCH_END = "exploring epochs ended"
    NOTHING = "nothing to tune"
    FAILED = "a configuration failed"
    INCOMPLETE = "exploration incomplete"
    RUN_END = "the steps left cannot repay more exploring"
    REMEMBERED = "the remembered choice still holds"


class Persisted(StrEnum):
    """Why the climb's choice keeps persistent_workers or not (policy.py, HillClimb.persistence)."""

    SCRIPT = "the script's own setting"
    MATTERS = "its restart matters"  # a fresh pool's start-up is MATTERS_SHARE of an epoch or more
    NEGLIGIBLE = "its restart does not matter"
    UNKNOWN = "unknown"  # no epoch length or no start-up measured: kept, never cheaper without


@dataclass(frozen=True)
class PersistenceCall:
    """The climb's persistence decision and what it read: the chosen pool's start-up against an
    epoch at its rate, each None where not measured."""

    keep: bool
    why: Persisted
    startup_s: float | None
    epoch_s: float | None


class Check(StrEnum):
    """Where a run that started from the memory (online/memory.py) stands with its check."""

    CHECKING = "checking"
    HELD = "held"  # its first windows agree with the remembered rate, within the noise
    DRIFTED = "drifted"  # they do not: exploring started again
    UNCHECKED = "unchecked"  # nothing to compare with (a recipe of `autotune tune`'s)


@dataclass
class Reuse:
    """What this run took from the memory, and what its check of the remembered best found."""

    run: int  # this run's number for the workload on this machine
    label: str  # the remembered choice, run from step 0
    finished: bool  # the remembered exploring had finished
    measured: int  # configurations remembered
    remembered_rate: float | None  # batches/s of the remembered best in the loop; None: not
    remembered_n: int  # its windows
    noise_cv: float | None  # the remembered windows' noise (one window's relative std)
    source: str = "online"
    # How high the remembered rate reads for the pick that chose it, where it was never measured
    # after it (decision/drift.py, selection_bias): the check compares with the rate less it.
    selection_bias: float = 0.0
    # batches/s over the remembered best's steady steps (an epoch's first step left out): what
    # the check's first steps compare with (decision/drift.py, EARLY_DRIFT)
    remembered_steady: float | None = None
    check: Check = Check.CHECKING
    check_steps: int = 0
    rate: float | None = None  # batches/s of the check's windows
    band: float | None = None  # the drift the check allowed, as a share of the remembered rate
    against: float | None = None  # the remembered rate `rate` was compared with
    # The check's first steady steps, read before its windows close (whole epochs, where epochs
    # are short): a gross drift is taken from them (decision/drift.py, EARLY_DRIFT).
    early_steps: int = 0
    early_s: float = 0.0
    early_wait_s: float = 0.0
    early_unready_s: float = 0.0
    early_read: bool = False
    # This run's first pool start-up and the remembered best's (iter() to its first batch): a
    # slower fetch hidden from the first epoch's steps by the batches in flight shows in it.
    startup_s: float | None = None
    remembered_startup_s: float | None = None
    slow_start: bool = False  # the drift was read from the start-up (drift.first_epoch_rates)
    # The remembered exploring was unfinished but had lost all its bound allows: none in this run.
    bound_spent: bool = False
    # The steady steps the remembered rate is over where it is the choice's rate after exploring
    # (Entry.settled); None where it is the rate of the windows that chose it.
    settled_steps: int | None = None


@dataclass(frozen=True)
class ClimbSettings:
    epoch_steps: int | None  # the first epoch's length, where the sampler has one
    usable_cpus: int
    cuda: bool
    # The exploration bound: the time lost against the best so far may reach this share of the
    # horizon's time at the best's rate.
    bound_share: float = 0.1
    # The least horizon, in steps: a training whose epochs are shorter (or have no length) runs
    # several, and exploring goes on through the epochs that make up this many steps.
    min_horizon_steps: int = 600
    # The most workers tried. None: the range starts at 4 per usable CPU and grows while more
    # workers pay off (decision/worker_range.py).
    max_workers: int | None = None
    window_steps: int = 8
    # A window also lasts this many seconds (within the epoch's room): 8 steps of 3 ms are the OS
    # scheduler's jitter, not a rate.
    window_s: float = 0.1
    # The run's first steps are nobody's steady state (allocators, cuDNN autotuning, caches).
    warmup_steps: int = 5
    min_windows: int = 2
    max_windows: int = 6
    # Windows are whole epochs (whole_epochs) where this many candidates, each measured over a
    # start-up epoch and `min_windows` whole ones, fit in the horizon: the start's prediction
    # and the neighbours the climb then tries.
    whole_epoch_candidates: int = 4
    # The training's length in steps, where the script or its framework gave it (run_length.py),
    # and where it was read.
    total_steps: int | None = None
    total_source: str | None = None

    @property
    def horizon_steps(self) -> int:
        """The steps exploring may span (whole epochs) and its bound is a share of: never more
        than the training itself."""
        horizon = max(self.epoch_steps or 0, self.min_horizon_steps)
        return horizon if self.total_steps is None else min(horizon, self.total_steps)

    @property
    def warmup(self) -> int:
        """The run's first steps, never measured: at most 1% of a known run, so that a short run
        does not spend a real share of its steps, at the script's (often the slowest)
        configuration, on measuring nothing."""
        if self.total_steps is None:
            return self.warmup_steps
        return min(self.warmup_steps, max(1, self.total_steps // 100))

    @property
    def least_window(self) -> int:
        """A window's least steps before the convoy rule (window) and `window_s`: at most
        1% of a known run. At num_workers=0 (no convoy) one long step is a window: the script's
        start is often the slowest configuration, where a short run cannot afford long windows."""
        if self.total_steps is None:
            return self.window_steps
        return max(1, min(self.window_steps, self.total_steps // 100))

    @property
    def whole_epochs(self) -> bool:
        """A pool's windows are whole epochs, boundaries included, where epochs are this short.
        A window inside a short epoch reads the buffer's drain at its tail and never the refill
        at its start, so it favours deep prefetching that the epoch's first batch then pays for
        (results/bench/online-start). As a burst does on an epoch too short for a window inside
        it (burst/epoch_window.py): measured, no model."""
        epoch = self.epoch_steps
        return (
            epoch is not None
            and self.whole_epoch_candidates * (self.min_windows + 1) * epoch <= self.horizon_steps
        )

    def windowed_by_epoch(self, config: LoaderConfig) -> bool:
        """`config`'s windows are whole epochs: a pool's (at num_workers=0 there is no buffer to
        drain or refill, and the start is measured in a few steps)."""
        return self.whole_epochs and config.num_workers > 0

    def measure_steps(self, config: LoaderConfig) -> int:
        """The steps that measuring `config` takes after a switch to it, at the least."""
        if self.windowed_by_epoch(config):
            assert self.epoch_steps is not None
            return (self.min_windows + 1) * self.epoch_steps
        return self.segment_warm_up(config) + self.min_windows * self.window(config)[0]

    @property
    def _half_epoch(self) -> int | None:
        """The most steps of an epoch a segment's warm-up may take, so that a window fits after
        it; None where epochs have no length."""
        return None if self.epoch_steps is None else max(0, (self.epoch_steps - 1) // 2)

    def segment_warm_up(self, config: LoaderConfig) -> int:
        """Steps of a segment that are not its steady state: the start-up step and the batches its
        workers buffered meanwhile (handed out faster than they are made). Every epoch starts a
        segment, so this and a window must fit in one: at most half an epoch."""
        half = self._half_epoch
        depth = config.prefetch_depth
        return 1 + (depth if half is None else min(depth, half))

    def warmed(self, config: LoaderConfig, segment_step: int, segment_s: float) -> bool:
        """Whether a segment is past its warm-up at its step `segment_step`, its steps after the
        first having taken `segment_s`: its first `segment_warm_up` steps, and with workers its
        first `window_s` of steps too (on in-memory, a fresh 1-worker pool's first 0.1 s window
        read below its later ones in 8 of 8 rounds, 0.958 of them in the median, where
        num_workers=0 read 0.997: results/bench/fresh-pool), within half an epoch. Every epoch
        starts a segment, a persistent pool's too, so each epoch's first `window_s` is left out."""
        if segment_step < self.segment_warm_up(config):
            return False
        if config.num_workers == 0 or segment_s >= self.window_s:
            return True
        half = self._half_epoch
        return half is not None and segment_step >= half

    def window(self, config: LoaderConfig) -> tuple[int, int | None]:
        """A window's least and most steps. At least as many as batches can be in flight: torch
        hands batches out in order, so a deep pool delivers in convoys about that long, and a
        shorter window reads part of one (as bursts do, burst/window.py) and can rank two
        configurations the wrong way round (results/gpu/2026-11-23-h100.md). At most what the
        epoch leaves after the warm-up: a pool whose batches in flight fill an epoch would
        otherwise run on and never be read. In between, `window_s` decides. At num_workers=0
        there is no convoy: SYNC_WINDOW_STEPS."""
        least = (
            min(self.least_window, SYNC_WINDOW_STEPS)
            if config.num_workers == 0
            else max(self.least_window, config.prefetch_depth)
        )
        epoch = self.epoch_steps
        if epoch is None:
            return least, None
        most = max(2, epoch - self.segment_warm_up(config))
        return min(least, most), most

    def worker_range(self, start: LoaderConfig, fits: Fits = any_fits) -> WorkerRange:
        return WorkerRange.of(self.usable_cpus, self.max_workers, start.num_workers, fits)


@dataclass(frozen=True)
class Request:
    """A configuration to measure: a candidate judged against the best, or the best itself
    measured again (`again`) for fresh windows."""

    config: LoaderConfig
    again: bool = False


def normal(config: LoaderConfig) -> LoaderConfig:
    """`config` as torch runs it: no prefetch or persistence without workers, torch's implied
    prefetch spelled out with them (so that one configuration has one key)."""
    if config.num_workers == 0:
        return replace(config, prefetch_factor=None, persistent_workers=False)
    return replace(
        config, prefetch_factor=BY_NAME["prefetch_factor"].effective(config.prefetch_factor)
    )


def with_value(config: LoaderConfig, name: str, value: object) -> LoaderConfig:
    """`config` with one knob changed, kept valid for torch."""
    return normal(config.with_knob(name, value))
