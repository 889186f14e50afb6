"""Which configuration the loader runs next, and when exploring stops.

A noise-aware hill-climb, one knob at a time: num_workers first (a jump from the starting point
to the usable CPUs, then up or down a ladder of counts from the better of the two), then
prefetch_factor on the prefetch ladder, then pin_memory where CUDA is used. Each configuration is
measured in windows of the training loop's own steps (after the batches its workers buffered
during start-up); a candidate is compared with the best so far by search/choose.py's statistics:
better or worse when the means differ by more than the noise band (two standard errors of the
difference, at least 1%), tied when the band is down to 2% or the candidate has its most
windows. A tie goes to the cheaper configuration (the registry's cost order). The climb along a
knob stops at the first candidate that is not better, and exploring stops when every knob is
settled: the choice is then sound by the measured noise. It also stops at the exploration bound
(a share of the first epoch's steps) or at the first epoch's end, keeping the best so far.

persistent_workers cannot be measured inside an epoch; it is set where the chosen configuration's
measured start-up, paid again every epoch, is at least 1% of an epoch.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from typing import Generator, Protocol

from autotune.online.meter import Step
from autotune.search.choose import TARGET, TOLERANCE_FLOOR, pooled_cv, tolerance
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME, cost_order
from autotune.space.space import max_workers_for
from autotune.strenum import StrEnum

TUNED = ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")
WORKER_LADDER = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    TIED = "tied"
    OPEN = "open"  # not measured enough to tell


class StopReason(StrEnum):
    RESOLVED = "resolved within the measured noise"
    BOUND = "exploration bound reached"
    EPOCH_END = "first epoch ended"
    NOTHING = "nothing to tune"


class Policy(Protocol):
    """What the loader asks its policy; `observe` returns the configuration to switch to."""

    current: LoaderConfig
    exploring: bool

    def observe(self, step: Step) -> LoaderConfig | None: ...

    def epoch_ended(self) -> LoaderConfig | None: ...


@dataclass
class FixedPolicy:
    """One configuration throughout: a recipe applied, tuning off, or an IterableDataset."""

    current: LoaderConfig
    exploring: bool = False

    def observe(self, step: Step) -> LoaderConfig | None:
        return None

    def epoch_ended(self) -> LoaderConfig | None:
        return None


@dataclass
class Measurement:
    """One configuration's windows of steady steps."""

    config: LoaderConfig
    rates: list[float] = field(default_factory=list)  # batches/s of each window
    startup_s: float | None = None  # iter() of its inner loader to its first batch
    steps: int = 0  # every step it ran, warm-up included
    steady_s: float = 0.0  # the steady steps' time, and the wait inside it
    steady_wait_s: float = 0.0
    _window: list[float] = field(default_factory=list)

    def add(self, step: Step, window_steps: int) -> bool:
        """One steady step; True when it completed a window."""
        assert step.step_s is not None
        self.steady_s += step.step_s
        self.steady_wait_s += step.wait_s
        self._window.append(step.step_s)
        if len(self._window) < window_steps:
            return False
        self.rates.append(len(self._window) / max(sum(self._window), 1e-12))
        self._window = []
        return True

    @property
    def n(self) -> int:
        return len(self.rates)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.rates) if self.rates else 0.0

    @property
    def wait_pct(self) -> float | None:
        return 100 * self.steady_wait_s / self.steady_s if self.steady_s > 0 else None


@dataclass(frozen=True)
class ClimbSettings:
    budget_steps: int  # exploration bound, in steps
    epoch_steps: int | None  # the first epoch's length, where the sampler has one
    usable_cpus: int
    cuda: bool
    max_workers: int | None = None  # None: max_workers_for(usable_cpus)
    window_steps: int = 8
    # The run's first steps are nobody's steady state (allocators, cuDNN autotuning, caches).
    warmup_steps: int = 5
    min_windows: int = 2
    max_windows: int = 6


def cost(config: LoaderConfig) -> tuple[float, ...]:
    """The registry's cheapest-first order (fewest workers, smallest prefetch, no pinning)."""
    return tuple(config.cost_of(knob) for knob in cost_order())


def normal(config: LoaderConfig) -> LoaderConfig:
    """`config` as torch runs it: no prefetch or persistence without workers, torch's implied
    prefetch spelled out with them (so that one configuration has one key)."""
    if config.num_workers == 0:
        return replace(config, prefetch_factor=None, persistent_workers=False)
    return replace(config, prefetch_factor=BY_NAME["prefetch_factor"].effective(config.prefetch_factor))


def with_value(config: LoaderConfig, name: str, value: object) -> LoaderConfig:
    """`config` with one knob changed, kept valid for torch."""
    return normal(replace(config, **{name: value}))


class HillClimb:
    def __init__(self, start: LoaderConfig, tuned: tuple[str, ...], settings: ClimbSettings):
        self.settings = settings
        self.tuned = tuned
        start = normal(start)
        self.start = start
        self.current = start
        self.exploring = True
        self.stop_reason: StopReason | None = None
        self.measured: dict[LoaderConfig, Measurement] = {start: Measurement(start)}
        self.best = self.measured[start]
        self.steps = 0  # exploration steps so far
        self._primed = False  # the start is measured and the plan under way
        self._climb = self._plan()
        if not ("num_workers" in tuned or "prefetch_factor" in tuned and start.num_workers > 0
                or "pin_memory" in tuned and settings.cuda):
            self._stop(StopReason.NOTHING)

    # -- the driver: steps in, switches out --------------------------------------------------

    def observe(self, step: Step) -> LoaderConfig | None:
        if not self.exploring:
            return None
        self.steps += 1
        m = self.measured[self.current]
        m.steps += 1
        if step.startup_s is not None and m.startup_s is None:
            m.startup_s = step.startup_s
        steady = (step.step_s is not None and step.index >= self.settings.warmup_steps
                  and step.segment_step >= _warm_up(self.current))
        window_done = steady and m.add(step, self.settings.window_steps)
        if self.steps >= self.settings.budget_steps:
            return self._stop(StopReason.BOUND)
        if not window_done:
            return None
        verdict = self.verdict(self.best, m) if self._primed else self._start_verdict(m)
        if verdict is Verdict.OPEN:
            return None
        try:  # the plan's first candidate once the start is measured, then verdict by verdict
            nxt = self._climb.send(verdict) if self._primed else next(self._climb)
        except StopIteration:
            return self._stop(StopReason.RESOLVED)
        self._primed = True
        return self._measure(nxt)

    def epoch_ended(self) -> LoaderConfig | None:
        return self._stop(StopReason.EPOCH_END) if self.exploring else None

    def _start_verdict(self, m: Measurement) -> Verdict:
        return Verdict.TIED if m.n >= self.settings.min_windows else Verdict.OPEN

    def _measure(self, config: LoaderConfig) -> LoaderConfig:
        self.measured.setdefault(config, Measurement(config))
        self.current = config
        return config

    def _stop(self, reason: StopReason) -> LoaderConfig | None:
        """Exploring ends: the best so far, with persistent workers decided, from now on."""
        self.exploring = False
        self.stop_reason = reason
        chosen = self._persistence(self.best.config)
        if chosen == self.current:
            return None
        self.current = chosen
        return chosen

    # -- the statistics ---------------------------------------------------------------------

    def noise_cv(self) -> float | None:
        return pooled_cv([m.rates for m in self.measured.values()])

    def verdict(self, best: Measurement, cand: Measurement) -> Verdict:
        if cand.n < self.settings.min_windows or best.n == 0:
            return Verdict.OPEN
        band = tolerance(self.noise_cv(), best.n, cand.n)
        gain = cand.mean / best.mean - 1
        if gain > band:
            return Verdict.BETTER
        if gain < -band:
            return Verdict.WORSE
        if band <= TARGET or cand.n >= self.settings.max_windows:
            return Verdict.TIED
        return Verdict.OPEN

    # -- the plan: configurations to measure, each judged against the best so far ------------

    def _plan(self) -> Generator[LoaderConfig, Verdict, None]:
        s = self.settings
        if "num_workers" in self.tuned:
            top = max_workers_for(s.usable_cpus) if s.max_workers is None else s.max_workers
            jump = min(s.usable_cpus, top)
            ladder = sorted({*(w for w in WORKER_LADDER if w <= top), jump, self.current.num_workers})
            yield from self._try(with_value(self.best.config, "num_workers", jump))
            yield from self._climb_knob("num_workers", ladder)
        if "prefetch_factor" in self.tuned and self.best.config.num_workers > 0:
            pf = BY_NAME["prefetch_factor"]
            current = pf.effective(self.best.config.prefetch_factor)
            yield from self._climb_knob("prefetch_factor", sorted({*pf.values, current}))
        if "pin_memory" in self.tuned and s.cuda:
            yield from self._try(with_value(self.best.config, "pin_memory",
                                            not self.best.config.pin_memory))

    def _try(self, config: LoaderConfig) -> Generator[LoaderConfig, Verdict, bool]:
        """Measure `config` against the best so far (unless measured already); True when it
        took the best's place: faster beyond noise, or tied and cheaper."""
        if config == self.best.config:
            return False
        known = self.measured.get(config)
        verdict = (self.verdict(self.best, known) if known is not None and known.n else
                   (yield config))
        cand = self.measured[config]
        cheaper = cost(config) < cost(self.best.config)
        if verdict is Verdict.BETTER or (verdict is Verdict.TIED and cheaper):
            self.best = cand
            return True
        return False

    def _climb_knob(self, name: str, ladder: list[int]) -> Generator[LoaderConfig, Verdict, None]:
        for direction in (1, -1):
            moved = False
            while True:
                value = BY_NAME[name].effective(getattr(self.best.config, name))
                i = ladder.index(value) + direction
                if not 0 <= i < len(ladder):
                    break
                if not (yield from self._try(with_value(self.best.config, name, ladder[i]))):
                    break
                moved = True
            if moved:  # it climbed: the other side of where it started was measured or is lower
                return

    def _persistence(self, config: LoaderConfig) -> LoaderConfig:
        if "persistent_workers" not in self.tuned or config.num_workers == 0:
            return config
        m = self.measured.get(config)
        epoch_s = (None if m is None or not m.mean or self.settings.epoch_steps is None
                   else self.settings.epoch_steps / m.mean)
        startup = None if m is None else m.startup_s
        keep = epoch_s is None or startup is None or startup >= TOLERANCE_FLOOR * epoch_s
        return replace(config, persistent_workers=keep)


def _warm_up(config: LoaderConfig) -> int:
    """Steps after a switch that are not its steady state: the start-up step and the batches its
    workers buffered meanwhile (handed out faster than they are made)."""
    return 1 + config.prefetch_depth
