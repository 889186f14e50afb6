"""Which configuration the loader runs next, and when exploring stops.

Predict, then refine by what the loop shows, one measured candidate at a time:

1. The start (the arguments given) is measured for one window. At num_workers=0 its fetch, inside
   `__next__`, and its CPU share tell how many workers the step needs (predict.py: the offline
   probes' model, capped by the free cores only where the fetch computes); the climb jumps there.
2. While the best so far still waits a real share of its time on the loader (measurement.py's
   WAITS_SHARE), it tries a deeper prefetch (the cheaper knob; it rides out convoys of workers
   waiting on storage), then more workers: the count its own measured rate says the step needs, at
   least the next rung, past the worker range's top where the workers wait rather than compute
   (worker_range.py). A candidate that is not better ends that direction.
3. A best that never waits may have more workers than it needs: fewer are tried, rung by rung,
   while they tie (a tie goes to the cheaper configuration, the registry's cost order).
4. pin_memory where CUDA is used. Then the winner's curse: where the closest rival is within noise,
   the best is measured again and judged on its new windows alone.

Verdicts are search/choose.py's statistics over windows of the loop's own steps (after a switch's
start-up and the batches its workers buffered meanwhile): better or worse beyond the noise band
(two standard errors of the difference, at least 1%), tied once the band is down to 2%; after the
most windows an unresolved candidate is judged by its mean, tied within 2% (as choose.py does where
the budget ends first). Exploring stops when the plan is done (the choice is then sound by the measured
noise), at the end of the epoch that completes the horizon (the first epoch, or as many as make
up `min_horizon_steps` where epochs are short), or at the exploration bound: the time exploring
lost against the best configuration measured so far reaches a share of the horizon's time at that
best's rate. The start's own measurement is outside the bound (it is what not tuning costs, and the
prediction needs it) but in the reported cost.

persistent_workers cannot be measured inside an epoch; it is set where the chosen configuration's
measured start-up, paid again every epoch, is at least 1% of an epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generator, Protocol

from autotune.online.measurement import Measurement
from autotune.online.meter import Ledger, Step
from autotune.online.predict import needed_workers
from autotune.online.worker_range import Fits, WorkerRange, any_fits
from autotune.search.choose import TARGET, TOLERANCE_FLOOR, pooled_cv, tolerance
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME, cost_order
from autotune.space.space import max_workers_for
from autotune.strenum import StrEnum

TUNED = ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")
WORKER_LADDER = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
UNCAPPED = 1 << 16  # a prediction's cap where only the cores may bound it
# The start is measured this many windows: enough to predict from, and a start far from the
# best is the costliest configuration to linger on.
START_WINDOWS = 1


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    TIED = "tied"
    OPEN = "open"  # not measured enough to tell


class StopReason(StrEnum):
    RESOLVED = "resolved within the measured noise"
    BOUND = "exploration bound reached"
    EPOCH_END = "exploring epochs ended"
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
    # The most workers tried. None: the range starts at max_workers_for(usable_cpus) and grows
    # while more workers pay off (worker_range.py).
    max_workers: int | None = None
    window_steps: int = 8
    # A window also lasts this many seconds (within the epoch's room): 8 steps of 3 ms are the OS
    # scheduler's jitter, not a rate.
    window_s: float = 0.1
    # The run's first steps are nobody's steady state (allocators, cuDNN autotuning, caches).
    warmup_steps: int = 5
    min_windows: int = 2
    max_windows: int = 6

    @property
    def horizon_steps(self) -> int:
        """The steps exploring may span (whole epochs) and its bound is a share of."""
        return max(self.epoch_steps or 0, self.min_horizon_steps)

    def worker_range(self, start: LoaderConfig, fits: Fits = any_fits) -> WorkerRange:
        return WorkerRange.of(max_workers_for(self.usable_cpus), self.max_workers,
                              start.num_workers, fits)


@dataclass(frozen=True)
class Request:
    """A configuration to measure: a candidate judged against the best, or the best itself
    measured again (`again`) for fresh windows."""

    config: LoaderConfig
    again: bool = False


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
    def __init__(self, start: LoaderConfig, tuned: tuple[str, ...], settings: ClimbSettings,
                 fits: Fits = any_fits):
        self.settings = settings
        self.range = settings.worker_range(start, fits)
        self.tuned = tuned
        start = normal(start)
        self.start = start
        self.current = start
        self.exploring = True
        self.stop_reason: StopReason | None = None
        self.measured: dict[LoaderConfig, Measurement] = {start: Measurement(start)}
        self.best = self.measured[start]
        self.steps = 0  # exploration steps so far
        self.bounded = Ledger()  # the steps the bound counts: all after the start's measurement
        self._request = Request(start)
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
        if self._primed:
            self.bounded.add(step, exploring=True)
        steady = (step.step_s is not None and step.index >= self.settings.warmup_steps
                  and step.segment_step >= self._warm_up(self.current))
        window_done = steady and m.add(step, *self._window(self.current), self.settings.window_s)
        if not window_done:
            return None
        verdict = self._judge(m)
        if verdict is Verdict.OPEN:
            return None
        try:  # the plan's first request once the start is measured, then verdict by verdict
            nxt = self._climb.send(verdict) if self._primed else next(self._climb)
        except StopIteration:
            return self._stop(StopReason.RESOLVED)
        self._primed = True
        # Checked where a candidate was judged (its verdict counts: it may be the best now), before
        # the next one starts: a start-up paid for is not thrown away half-measured.
        if self._bound_reached():
            return self._stop(StopReason.BOUND)
        running = self.current
        config = self._measure(nxt)
        return None if config == running else config  # measured again where it runs: no switch

    def epoch_ended(self) -> LoaderConfig | None:
        """Exploring stops at the end of the epoch that completes the horizon (the first one,
        unless epochs are short); otherwise the next epoch goes on with the same candidate."""
        if not self.exploring:
            return None
        if self.steps >= self.settings.horizon_steps:
            return self._stop(StopReason.EPOCH_END)
        self.measured[self.current].resumed()  # a window is not made of two epochs' steps
        return None

    def _warm_up(self, config: LoaderConfig) -> int:
        """Steps of a segment that are not its steady state: the start-up step and the batches its
        workers buffered meanwhile (handed out faster than they are made). Every epoch starts a
        segment, so this and a window must fit in one: at most half an epoch."""
        epoch = self.settings.epoch_steps
        depth = config.prefetch_depth
        return 1 + (depth if epoch is None else min(depth, max(0, (epoch - 1) // 2)))

    def _window(self, config: LoaderConfig) -> tuple[int, int | None]:
        """A window's least and most steps. At least as many as batches can be in flight: torch
        hands batches out in order, so a deep pool delivers in convoys about that long, and a
        shorter window reads part of one (as bursts do, burst/window.py). On an H100, 8-step
        windows of 14 workers read 0 to 1,980 samples/s around steady rates of 1,350-1,650, and
        ranked pin_memory 5% below its absence where it was 22% ahead. At most what the epoch
        leaves after the warm-up: on 128-step epochs, 16 workers at prefetch 8 (128 in flight)
        were run for 399 steps and never read. In between, `window_s` decides."""
        least = max(self.settings.window_steps, config.prefetch_depth)
        epoch = self.settings.epoch_steps
        if epoch is None:
            return least, None
        most = max(2, epoch - self._warm_up(config))
        return min(least, most), most

    def _judge(self, m: Measurement) -> Verdict:
        """Whether the running request is measured enough, and how it compares."""
        if not self._primed:
            return Verdict.TIED if m.n >= START_WINDOWS else Verdict.OPEN
        if self._request.again:
            return Verdict.TIED if m.n >= self.settings.min_windows else Verdict.OPEN
        return self.verdict(self.best, m)

    def _bound_reached(self) -> bool:
        if not self.best.mean:
            return False
        best_step_s = 1 / self.best.mean
        allowed = self.settings.bound_share * self.settings.horizon_steps * best_step_s
        return self.bounded.cost_s(best_step_s) >= allowed

    def _measure(self, request: Request) -> LoaderConfig:
        m = self.measured.setdefault(request.config, Measurement(request.config))
        if request.again:
            m.remeasure()
        else:
            m.resumed()
        self._request = request
        self.current = request.config
        return request.config

    def _stop(self, reason: StopReason) -> LoaderConfig | None:
        """Exploring ends: the best so far, with persistent workers decided, from now on."""
        self.exploring = False
        self.stop_reason = reason
        chosen = self._persistence(self.best.config)
        running = self.current
        self.current = chosen
        # Persistence alone acts at the next epoch's start: no workers restart for it now.
        same = replace(chosen, persistent_workers=running.persistent_workers) == running
        return None if same else chosen

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
        if band <= TARGET:
            return Verdict.TIED
        if cand.n < self.settings.max_windows:
            return Verdict.OPEN
        # Measured all it may be and still unresolved: as choose.py does where the budget ends
        # first, the means decide beyond TARGET (a large gain is not a tie for being noisy).
        if abs(gain) <= TARGET:
            return Verdict.TIED
        return Verdict.BETTER if gain > 0 else Verdict.WORSE

    # -- the plan: configurations to measure, each judged against the best so far ------------

    def _plan(self) -> Generator[Request, Verdict, None]:
        s = self.settings
        if "num_workers" in self.tuned:
            jump = self._needed()
            if jump is not None:
                yield from self._try(self._candidate("num_workers", self.range.admit(jump)))
        while self.best.starved:  # still waiting on the loader: feed it more
            for cand in self._deeper():
                if (yield from self._try(cand)):
                    break
            else:
                break
        while "num_workers" in self.tuned and not self.best.starved:  # fed: fewer may do
            fewer = self._rung(self.best.config.num_workers, -1)
            if fewer is None or not (yield from self._try(self._candidate("num_workers", fewer))):
                break
        if "pin_memory" in self.tuned and s.cuda:
            yield from self._try(self._candidate("pin_memory", not self.best.config.pin_memory))
        yield from self._confirm()

    def _candidate(self, name: str, value: object) -> LoaderConfig:
        """The best with one knob changed. Where persistence is tuned, candidates keep their
        workers across an epoch's end (no effect inside an epoch): exploring over short epochs
        does not restart them, and the choice of persistence at the end switches nothing."""
        config = with_value(self.best.config, name, value)
        if "persistent_workers" in self.tuned and config.num_workers > 0:
            config = replace(config, persistent_workers=True)
        return config

    def _at_zero(self) -> Measurement | None:
        return next((m for m in self.measured.values() if m.config.num_workers == 0 and m.n), None)

    def _needed(self) -> int | None:
        """The prediction, capped by the cores alone (the range's top and limit apply where it is
        tried): past the top, the range is asked to grow."""
        return needed_workers(self._at_zero(), self.best, self.settings.usable_cpus, UNCAPPED)

    def _rung(self, workers: int, direction: int) -> int | None:
        """The next worker count up or down the ladder (the range's top and the counts measured
        are rungs too)."""
        top = self.range.top
        ladder = sorted({*(w for w in WORKER_LADDER if w <= top), top,
                         *(m.config.num_workers for m in self.measured.values())})
        i = ladder.index(workers) + direction
        return ladder[i] if 0 <= i < len(ladder) else None

    def _deeper(self) -> list[LoaderConfig]:
        """For a starved loop, cheapest first: a deeper prefetch, then more workers (at least the
        next rung, more where its own rate says the step needs them)."""
        config = self.best.config
        out = []
        pf = BY_NAME["prefetch_factor"]
        if "prefetch_factor" in self.tuned and config.num_workers > 0:
            deeper = [v for v in pf.values if v > pf.effective(config.prefetch_factor)]
            if deeper:
                out.append(self._candidate("prefetch_factor", deeper[0]))
        if "num_workers" in self.tuned:
            needed = self._needed()
            rung = self._rung(config.num_workers, 1)
            if rung is None and self._may_grow(needed):
                rung = self._rung(config.num_workers, 1)
            if rung is not None:
                out.append(self._candidate("num_workers", self.range.admit(max(rung, needed or 0))))
        return out

    def _may_grow(self, needed: int | None) -> bool:
        """The best, at the range's top, still waits on the loader: the range grows, unless the
        prediction says the top is enough (the fetch computes and the cores are spoken for)."""
        if needed is not None and needed <= self.range.top:
            self.range.refuse(f"the loop waits, but the fetch measured at num_workers=0 computes:"
                              f" the cores allow {needed} workers, within the top of {self.range.top}")
            return False
        return self.range.grow()

    def _try(self, config: LoaderConfig) -> Generator[Request, Verdict, bool]:
        """Measure `config` against the best so far (unless measured already); True when it
        took the best's place."""
        if config == self.best.config:
            return False
        known = self.measured.get(config)
        verdict = (self.verdict(self.best, known) if known is not None and known.n else
                   (yield Request(config)))
        return self._adopt(self.measured[config], verdict)

    def _adopt(self, cand: Measurement, verdict: Verdict) -> bool:
        """`cand` takes the best's place if faster beyond noise, or tied and cheaper."""
        cheaper = cost(cand.config) < cost(self.best.config)
        if verdict is Verdict.BETTER or (verdict is Verdict.TIED and cheaper):
            self.best = cand
            return True
        return False

    def _confirm(self) -> Generator[Request, Verdict, None]:
        """The winner's curse: a best chosen over a rival within noise was selected for its high
        windows. It is measured again, judged on the new windows alone, and the rival re-judged."""
        rivals = [m for m in self.measured.values() if m is not self.best and m.n]
        if not rivals:
            return
        rival = max(rivals, key=lambda m: m.mean)
        if self.verdict(self.best, rival) is Verdict.WORSE:
            return
        yield Request(self.best.config, again=True)
        self._adopt(rival, self.verdict(self.best, rival))

    def _persistence(self, config: LoaderConfig) -> LoaderConfig:
        if "persistent_workers" not in self.tuned or config.num_workers == 0:
            return config
        m = self.measured.get(config)
        epoch_s = (None if m is None or not m.mean or self.settings.epoch_steps is None
                   else self.settings.epoch_steps / m.mean)
        startup = None if m is None else m.startup_s
        keep = epoch_s is None or startup is None or startup >= TOLERANCE_FLOOR * epoch_s
        return replace(config, persistent_workers=keep)
