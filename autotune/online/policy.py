"""Which configuration the loader runs next, and when exploring stops.

Predict, then refine by what the loop shows, one measured candidate at a time:

1. The start (the arguments given) is measured for one window (at num_workers=0 a window of 3
   steps: no convoy to span, and the start is often the slowest). At num_workers=0 its fetch, inside
   `__next__`, and its CPU share tell how many workers the step needs (predict.py: the offline
   probes' model, capped by the free cores only where the fetch computes); the climb jumps there,
   at the shallowest prefetch where a window is a whole epoch (decision/prefetch.py: a short
   epoch pays the pool's refill every few steps).
2. While the best so far still waits a real share of its time on the loader (measurement.py's
   WAITS_SHARE), it tries a deeper prefetch (the cheaper knob; it rides out convoys of workers
   waiting on storage; the loader takes it in place, no pool starting: epoch.py), then more
   workers (more workers first where the pool is short of them by more than a rung:
   decision/worker_range.py's `count_short`): the count its own measured rate says the step
   needs, at least the next rung, past the worker range's top where the workers wait rather than
   compute (decision/worker_range.py). A candidate that is not better ends that direction.
3. A best that never waits may have more workers than it needs: fewer are tried, rung by rung,
   while they tie (a tie goes to the cheaper configuration, the registry's cost order).
4. pin_memory where CUDA is used: the candidates above are pinned there (the larger gain on a
   GPU, measured before any bound can end the climb), and this step measures the best unpinned.
   Then the winner's curse: where the closest rival is within noise or faster beyond it, or the
   best is the start measured in its one window, the best is measured again and judged on its
   new windows alone.

Verdicts are the one brain's (decision/verdict.py, which search/choose.py reads too) over windows
of the loop's own steps (after a switch's start-up, the batches its workers buffered meanwhile,
and a pool's first window_s): better or worse beyond the noise band (two standard errors of the
difference, at least 1%, below the faster mean), tied once the band is down to 2%; after the most
windows an unresolved candidate is judged by its mean, tied within 2% (as choose.py does where
the budget ends first).

Exploring stops when the plan is done (the choice is then sound by the measured noise), at the end
of the epoch that completes the horizon (the first epoch, or as many as make up `min_horizon_steps`
where epochs are short), or at the exploration bound: the time exploring lost against the best
configuration measured so far (in this run and the earlier runs it goes on from: memory.py), plus
the start-up of the next candidate's pool (the longest measured in this run, so under the start
method in use), reaches a share of the horizon's time at that best's rate. The start's own
measurement is outside the bound (it is what not tuning costs, and the prediction needs it) but in
the reported cost. A run of unknown length whose bound stopped it before its first candidate and
that outlives the horizon doubles it and resumes (_resume).

Where the training's length is known (OnlineOptions.total_steps or epochs), the horizon is at most
the run, a short run warms up and measures in fewer steps, and exploring also stops before a
candidate that the steps left cannot repay (remaining.py).

persistent_workers cannot be measured inside an epoch; it is set where the chosen configuration's
measured start-up, paid again every epoch, is at least 2% of an epoch (decision/verdict.py's rule,
which the offline search's twin and epoch advice read too), or where the script set it. Where it
matters, a start run without persistent workers (its whole-epoch windows paying a fresh pool's
start-up) and the persistent candidates are judged at one setting (decision/epoch_time.py, as the
search compares its worker counts): never a rate that paid a restart every epoch against one that
did not.

One class, HillClimb: the driver (steps in, switches out), the check of a remembered best, the
plan (the configurations to measure, in order) and the statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Generator, Protocol

from autotune.decision import drift
from autotune.decision import verdict as brain
from autotune.decision.cost import cost
from autotune.decision.epoch_time import EpochParts, rate_at, shared_setting, steady_of
from autotune.decision.prefetch import first_depth
from autotune.decision.verdict import Verdict
from autotune.decision.worker_range import Evidence, Fits, any_fits, count_short
from autotune.online.climb_types import (
    START_WINDOWS,
    UNCAPPED,
    WORKER_LADDER,
    Check,
    ClimbSettings,
    NoPoolCpu,
    NoRamReading,
    Persisted,
    PersistenceCall,
    PoolCpu,
    RamReader,
    Request,
    Reuse,
    StopReason,
    normal,
    with_value,
)
from autotune.online.measurement import NOT_RUN, Measurement
from autotune.online.meter import Ledger, Step
from autotune.online.remaining import Remaining
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME

# The most the loop waits, once a configuration's warm-up is over, for the RAM reading started
# with its pool; a reading still running then goes on beside the windows.
RAM_WAIT_S = 1.0
# The most windows the chosen configuration is measured in after exploring (HillClimb.settled):
# past them each step costs nothing more, and the memory's file (written at exit, read at the
# next run's start) does not grow with the training's length.
SETTLED_WINDOWS = 64


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


class HillClimb:
    def __init__(
        self,
        start: LoaderConfig,
        tuned: tuple[str, ...],
        settings: ClimbSettings,
        fits: Fits = any_fits,
        ram: RamReader | None = None,
        room: Callable[[LoaderConfig], str | None] = lambda config: None,
        cpu: PoolCpu | None = None,
    ):
        self.settings = settings
        # The running pool's workers' CPU over its steady windows (pool_cpu.WorkersCpu): where the
        # run starts with workers, what tells a starved pool's workers waiting on storage from
        # computing (predict.py). `_cpu_mark`: the reading the running windows' CPU counts from.
        self._cpu = cpu or NoPoolCpu()
        self._cpu_mark: tuple[float, float] | None = None
        # The RAM a configuration holds (cost order), read on a thread where its pool starts
        # (pool_memory.RamReading) and collected at its window ends. Not at num_workers=0: there
        # is no pool, and the process alone is what every configuration holds, so the reading
        # breaks no tie that the worker count does not; waiting for it would cost the start a
        # step where a short run has none to spare, at the script's often slowest configuration.
        self._ram = ram or NoRamReading()
        self._reading = False  # the running segment reads its configuration's RAM
        self._ram_read: set[LoaderConfig] = set()  # the configurations whose RAM was read
        self.room = room  # why a candidate would not fit in memory now, checked before it starts
        self._fits = fits
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
        self.run_steps = 0  # the run's steps so far, exploring or not
        # Where a run of unknown length outlived the horizon after its bound stopped exploring
        # (_resume): the run's step where the horizon last grew, those where exploring resumed,
        # and the request the stop left unmeasured.
        self._outlived_at = 0
        self.resumed_at: list[int] = []
        self._deferred: Request | None = None
        # Exploration steps of earlier runs of this workload, and the time they lost (memory.py):
        # the horizon and the bound span runs, so an exploring cut short goes on where it stopped
        # with what is left of both, never with a fresh bound each run.
        self.prior_steps = 0
        self.prior_cost_s = 0.0
        self.bounded = Ledger()  # the steps the bound counts: all after the start's measurement
        self._request = Request(start)
        self._primed = False  # the start is measured and the plan under way
        self._segment_s = 0.0  # the running segment's step time after its first step (warmed)
        # The running configuration has run since its epoch's start, so that epoch can be a
        # whole-epoch window (ClimbSettings.whole_epochs); the run's first epoch starts a pool.
        self._since_epoch_start = False
        self._read_at_last_step = False  # the running epoch's workers' CPU was read at its end
        self._climb = self._plan()
        self.reuse: Reuse | None = None  # set where the run starts from the memory (memory.py)
        # The chosen configuration after exploring ended (_settled_step); None while exploring.
        self.settled: Measurement | None = None
        if not (
            "num_workers" in tuned
            or "prefetch_factor" in tuned
            and start.num_workers > 0
            or "pin_memory" in tuned
            and settings.cuda
        ):
            self._stop(StopReason.NOTHING)

    # -- the driver: steps in, switches out --------------------------------------------------

    def observe(self, step: Step) -> LoaderConfig | None:
        self.run_steps = step.index + 1
        if not self.exploring:
            self._settled_step(step)
            return None
        self.steps += 1
        if self.checking:
            assert self.reuse is not None
            self.reuse.check_steps += 1
        m = self.measured[self.current]
        m.steps += 1
        if m.startup_s is None:
            m.startup_s = (
                step.startup_s
                if step.startup_s is not None or step.segment_step != 0
                else self._pool_startup_s(m.config)
            )
        self._segment_step(step)
        if self.checking and self._drifted_early(step):
            return self._restart(m)
        if self._primed:
            self.bounded.add(step, exploring=True)
        s = self.settings
        warm_up = s.segment_warm_up(self.current)
        if step.segment_step == 0:  # a pool starts: its RAM is read once, with its first pool
            read = m.ram_mib is None and m.config not in self._ram_read and m.config.num_workers > 0
            self._reading = read and self._ram.start(m.config)
            self._ram_read.add(m.config)
        if self._reading:
            # The reading's page-table walk takes a core and the process's memory map: it is
            # waited for before the windows begin. The wait lies in the next step's time, so it
            # comes two steps before the first one steady by count (a pool's first window_s may
            # hold more: ClimbSettings.warmed), or one step later where there is no room for
            # that (a short run's start).
            first = max(warm_up, s.warmup - (step.index - step.segment_step))
            if step.segment_step == max(0, first - 2):
                self._ram.wait(RAM_WAIT_S)
                m.ram_mib = self._ram.value(m.config)
            warm_up = max(first, 2)
        before = m.steady_steps
        closed = self._add(m, step, warm_up)
        if m.steady_steps > before and m.config.num_workers > 0:
            last = self._epoch_last(step)
            self._read_at_last_step = last
            self._workers_cpu(m, closed or last)
        return self._window_closed(m) if closed else None

    def _epoch_last(self, step: Step) -> bool:
        """`step` is the last of a whole-epoch window: its workers' CPU is read now, while they
        live. torch shuts a non-persistent pool down as its epoch ends, before the loop sees the
        end: read there, a run that starts with workers over short epochs had no reading to
        predict from, and climbed a rung at a time."""
        s = self.settings
        return (
            s.windowed_by_epoch(self.current)
            and step.epoch_step is not None
            and step.epoch_step + 1 == s.epoch_steps
        )

    def _workers_cpu(self, m: Measurement, closed: bool) -> None:
        """The pool's first steady step marks its workers' CPU; each window's end reads it."""
        if self._cpu_mark is None:
            self._cpu_mark = self._cpu.start()
        elif closed:
            now = self._cpu.read()
            if now is not None:
                m.add_workers_cpu(self._cpu_mark, now)
            self._cpu_mark = now

    def _segment_step(self, step: Step) -> None:
        if step.segment_step == 0:
            self._segment_s = 0.0
        elif step.step_s is not None:
            self._segment_s += step.step_s

    def _add(self, m: Measurement, step: Step, warm_up: int) -> bool:
        """`step` into `m`'s windows, where it is steady; True when it closed a window (a
        whole-epoch window closes at the epoch's end instead)."""
        s = self.settings
        if s.windowed_by_epoch(self.current):
            if self._since_epoch_start:
                m.add_to_epoch(step, step.segment_step >= warm_up)
            return False
        steady = (
            step.step_s is not None
            and step.index >= s.warmup
            and step.segment_step >= warm_up
            and s.warmed(self.current, step.segment_step, self._segment_s)
        )
        return steady and m.add(step, *s.window(self.current), s.window_s)

    def _settled_step(self, step: Step) -> None:
        """After exploring, the chosen configuration's steps go on into windows of their own
        (`settled`), measured as the climb measures: its rate over the rest of the run, which the
        memory keeps for the next run's check (memory.py). The windows that chose it were read
        after a switch, and a pool started mid-run delivers faster for a while than one
        running since the run's start (results/bench/repeated-runs/notes.md): the next run's
        check, from step 0, is compared with a rate read as it reads."""
        m = self.settled
        if m is None or len(m.rates) >= SETTLED_WINDOWS:
            return
        m.steps += 1
        self._segment_step(step)
        self._add(m, step, self.settings.segment_warm_up(self.current))

    def _window_closed(self, m: Measurement) -> LoaderConfig | None:
        if m.ram_mib is None:
            m.ram_mib = self._ram.value(m.config)
        if self.checking:
            return self._checked(m)
        verdict = self._judge(m)
        if verdict is Verdict.OPEN:
            return None
        return self._advance(verdict)

    def _advance(self, verdict: Verdict) -> LoaderConfig | None:
        """The plan's next request after `verdict` on the running one; the configuration to
        switch to, if any."""
        try:  # the plan's first request once the start is measured, then verdict by verdict
            nxt = self._climb.send(verdict) if self._primed else next(self._climb)
        except StopIteration:
            return self._stop(StopReason.RESOLVED)
        self._primed = True
        # Checked where a candidate was judged (its verdict counts: it may be the best now), before
        # the next one starts: a start-up paid for is not thrown away half-measured.
        if self._bound_reached(nxt.config):
            self._deferred = nxt
            return self._stop(StopReason.BOUND)
        if not self._repays(nxt.config):
            return self._stop(StopReason.RUN_END)
        if self._refused(nxt):  # last: reading the memory is what it costs (pool_memory.py)
            return self._advance(Verdict.WORSE)
        running = self.current
        config = self._measure(nxt)
        return None if config == running else config  # measured again where it runs: no switch

    # -- a run started from the memory: the remembered best is checked first -----------------

    @property
    def checking(self) -> bool:
        return self.reuse is not None and self.reuse.check is Check.CHECKING

    def _checked(self, m: Measurement) -> LoaderConfig | None:
        """A window of the remembered best, run from step 0. Once it has `min_windows`, their
        rate is compared with the remembered one (decision/drift.py): within the band the memory
        holds, and the run goes on where it stopped (a finished exploring stays finished);
        beyond it, exploring starts again from the configuration running."""
        r = self.reuse
        assert r is not None
        if m.n < self.settings.min_windows:
            return None
        r.rate = m.mean
        if not r.remembered_rate:
            r.check = Check.UNCHECKED
        else:
            r.band = drift.band(r.noise_cv, r.remembered_n, m.n)
            r.against = r.remembered_rate * (1 - r.selection_bias)
            if drift.drifted(m.mean, r.against, r.band):
                r.check = Check.DRIFTED
                return self._restart(m)
            r.check = Check.HELD
            m.checked = True
            self._to_this_run(m, r.rate / r.remembered_rate)
        m.fresh_from = 0  # the remembered windows and the check's: one configuration's
        if r.finished:
            return self._stop(StopReason.REMEMBERED)
        # The plan again from its start, over what is measured: each step judged as it was (from
        # the start's measurement on) until the first configuration never measured.
        if self.measured[self.start].n:
            self.best = self.measured[self.start]
        switch = self._advance(Verdict.TIED)
        if self.stop_reason is StopReason.BOUND:
            # Stopped before any candidate ran: the earlier runs had lost all the bound allows.
            # The checked best runs on, settled as any stop settles it: a switch to a
            # configuration only remembered would start a pool for no gain measured in this run.
            r.bound_spent = True
            self.best, self.current = m, m.config
            return self._stop(StopReason.BOUND)
        return switch

    def _to_this_run(self, checked: Measurement, level: float) -> None:
        """The remembered windows, read at this run's level. Each run of a job settles at a
        level of its own (decision/drift.py), and the check measured this one's against the
        remembered best's: every remembered window is scaled by that ratio, so that the plan's
        verdicts over them stand as they were, and a candidate first measured in this run is
        compared with the best at this run's level, not at an earlier run's."""
        for m in self.measured.values():
            remembered = checked.fresh_from if m is checked else len(m.rates)
            m.rates[:remembered] = [rate * level for rate in m.rates[:remembered]]

    def _drifted_early(self, step: Step) -> bool:
        """The check's first window of steady steps, read once: a gross slowdown
        (decision/drift.py)."""
        r, s = self.reuse, self.settings
        assert r is not None
        if step.startup_s is not None and step.segment_step == 0 and r.startup_s is None:
            r.startup_s = step.startup_s  # the run's first pool start-up, the remembered best's
        if (
            r.early_read
            or not r.remembered_steady
            or step.step_s is None
            or step.index < s.warmup
            or not s.warmed(self.current, step.segment_step, self._segment_s)
        ):
            return False
        r.early_steps += 1
        r.early_s += step.step_s
        r.early_wait_s += step.wait_s
        r.early_unready_s += step.unready
        if r.early_steps < s.window(self.current)[0] or r.early_s <= 0:
            return False
        r.early_read = True
        rate = r.early_steps / r.early_s
        first = drift.first_epoch_rates(rate, s.epoch_steps, r.startup_s, r.remembered_startup_s)
        if drift.slowed_early(rate, r.remembered_steady):
            r.rate, r.against, r.band = rate, r.remembered_steady, drift.EARLY_DRIFT
        elif first is not None and drift.slowed_early(*first, drift.DRIFT_FLOOR):
            (r.rate, r.against), r.band, r.slow_start = first, drift.DRIFT_FLOOR, True
        else:
            return False
        r.check = Check.DRIFTED
        return True

    def _restart(self, m: Measurement) -> LoaderConfig | None:
        """The remembered measurements no longer hold: a climb from the configuration running,
        on the check's windows alone (a baseline at the script's start would cost a pool's
        restart and its slow steps); where none has closed yet, on its first steps as one."""
        r = self.reuse
        if not m.counted and r is not None and r.early_steps:
            # No window closed: the early read drifted, and its rate (its steps', or the first
            # epoch's with this run's start-up) is the one window
            assert r.rate
            m.rates, m.spans, m.at = [r.rate], [r.early_steps / r.rate], []
            m.steady_steps, m.steady_s = r.early_steps, r.early_s
            m.steady_wait_s, m.steady_unready_s = r.early_wait_s, r.early_unready_s
        else:
            fresh = m.pieces
            m.rates, m.spans = list(fresh.fresh), list(fresh.fresh_spans)
        if r is not None and r.startup_s is not None:
            m.startup_s = r.startup_s  # this run's: the remembered one no longer holds
        m.fresh_from = 0
        self.start = m.config
        self.prior_steps, self.prior_cost_s = 0, 0.0  # a new exploration: its horizon from here
        self.measured = {m.config: m}
        self.best = m
        self.range = self.settings.worker_range(m.config, self._fits)
        self._climb = self._plan()
        return self._advance(Verdict.TIED)

    def failed(self, config: LoaderConfig, error: str) -> LoaderConfig:
        """`config` raised where the start did not (a worker killed, /dev/shm full, a timeout):
        it is marked failed and never tried again. A candidate is judged worse and the plan goes
        on; a best that fails (measured again, or chosen) gives way to the start, and exploring
        ends. The configuration to run now."""
        m = self.measurement_of(config) or self.measured.setdefault(config, Measurement(config))
        m.failed = error
        if self.exploring and self._primed and config == self.current and m is not self.best:
            self._advance(Verdict.WORSE)
        else:
            if m is self.best:
                self.best = self.measured[self.start]
            if self.exploring:
                self._stop(StopReason.FAILED)
        running = self.measurement_of(self.current)
        if running is not None and running.failed:
            self._switched(self.choice_so_far())
        return self.current

    def cover(self, config: LoaderConfig) -> None:
        """The worker range holds `config` too, where a run starts there (a remembered choice):
        its top is never below the count the run measures, as it is never below the start's (a
        user's max_workers stays the top either way: decision/worker_range.py, worker_top)."""
        if config.num_workers > self.range.top:
            self.range = self.settings.worker_range(config, self._fits)

    def measurement_of(self, config: LoaderConfig) -> Measurement | None:
        """`config`'s measurement; persistence aside (the choice adds it after measuring)."""
        return self.measured.get(config) or next(
            (
                m
                for c, m in self.measured.items()
                if replace(c, persistent_workers=config.persistent_workers) == config
            ),
            None,
        )

    def choice_so_far(self) -> LoaderConfig:
        """What exploring would choose if it ended now."""
        return self._persistence(self.best.config)

    def epoch_ended(self) -> LoaderConfig | None:
        """A whole-epoch window closes (and may be judged: the next candidate then starts with
        the next epoch). Exploring stops at the end of the epoch that completes the horizon (the
        first one, unless epochs are short); otherwise the next epoch goes on with the running
        candidate."""
        if not self.exploring:
            if self.settled is not None:
                if self.settings.windowed_by_epoch(self.current):
                    self.settled.close_epoch()
                self.settled.resumed()
            self._since_epoch_start = True
            return self._resume()
        ran = self.current
        m = self.measured[ran]
        switch = None
        if self.settings.windowed_by_epoch(ran) and m.close_epoch():
            if self._cpu_mark is not None and not self._read_at_last_step:
                self._workers_cpu(m, closed=True)  # an epoch cut short: not read at its last step
            switch = self._window_closed(m)
        self._cpu_mark = None  # a pool that restarts has new workers; a kept one is read anew
        self._read_at_last_step = False
        if self.exploring and self.prior_steps + self.run_steps >= self.horizon_steps:
            switch = self._stop(StopReason.EPOCH_END)
        running = self.measurement_of(self.current)  # the choice may have added persistence
        if running is not None:
            running.resumed()  # a window is not made of two epochs' steps
        # The next epoch is a window where its pool runs on (a new one's first epoch starts it).
        self._since_epoch_start = self.current == ran
        return switch

    def _judge(self, m: Measurement) -> Verdict:
        """Whether the running request is measured enough, and how it compares."""
        if not self._primed:
            return Verdict.TIED if m.n >= START_WINDOWS else Verdict.OPEN
        if self._request.again:
            return Verdict.TIED if m.n >= self.settings.min_windows else Verdict.OPEN
        return self.verdict(self.best, m)

    def _bound_reached(self, config: LoaderConfig) -> bool:
        """The share bound, where the run's length is unknown, with the start-up of `config`'s
        pool (the one about to start) counted before it starts: under spawn or forkserver a pool
        takes seconds to start (each worker a fresh interpreter importing torch and the script).
        A known run is bounded by what exploring can still gain in its steps left (_repays): on a
        short run a share of it can be less than one pool's start-up, and would stop exploring
        while the loop still waits. The plan's first candidate is what tuning costs at all (a run
        started at num_workers=0 has measured no start-up to count for it): past the share, it is
        still tried where it repays its start-up within the horizon, as a known run's candidates
        are. Where the dataset's open takes seconds, one pool's start-up can be more than the
        share, which would leave a run started with too few workers where it started."""
        if not self.best.mean or self.settings.total_steps is not None:
            return False
        ahead_s = self._startup_ahead_s(config)
        if self.exploration_cost_s() + ahead_s < self._allowed_s():
            return False
        return not self._start_only or not Remaining(self.horizon_steps, self.run_steps).repays(
            self.settings.measure_steps(config),
            1 / self.best.mean,
            self.best.starved_share,
            ahead_s,
        )

    def _allowed_s(self) -> float:
        return self.settings.bound_share * self.horizon_steps / self.best.mean

    @property
    def horizon_steps(self) -> int:
        """The steps exploring may span, which its bound is a share of: the settings' (the first
        epoch, or `min_horizon_steps` of short ones), and where a run of unknown length outlived
        it before its first candidate, twice the run's steps where it last did (the horizon
        doubles each time the run outlives it), so that the bound stays a share of the run's
        time, and a candidate whose start-up the first horizon could not repay is tried once
        the run shows it can (_resume)."""
        return max(self.settings.horizon_steps, 2 * self._outlived_at)

    @property
    def _start_only(self) -> bool:
        """Only the start is measured: the plan's first candidate (the prediction's jump) is
        next."""
        return sum(1 for m in self.measured.values() if m.n and not m.failed) <= 1

    def _resume(self) -> LoaderConfig | None:
        """At an epoch's end after the bound stopped exploring before its first candidate (a run
        of unknown length, a start whose predicted candidate's start-up the horizon could not
        repay): once the run has outlived the horizon, exploring goes on where it stopped,
        within the grown horizon and what is left of its bound, where the candidate repays by
        the length the run is then expected to reach (_expected_steps). A climb that made its
        jump is not resumed: what it left is refinement near the best, and on the simulated
        bench (tiny-epochs, open-30, open-80) resuming it spent start-ups for no gain. None
        where it does not (or not yet): the chosen configuration runs on."""
        request = self._deferred
        if request is None or not self._start_only or self.run_steps < self.horizon_steps:
            return None
        self._outlived_at = self.run_steps
        if self._bound_reached(request.config) or not self._repays(request.config):
            return None  # not yet: asked again when the run doubles
        self._deferred = None
        self.resumed_at.append(self.run_steps)
        self.exploring, self.stop_reason, self.settled = True, None, None
        running = self.current
        config = self._measure(request)
        return None if config == running else config

    def exploration_cost_s(self) -> float:
        """What exploring this workload has lost against the best so far, in this run and in the
        earlier runs it goes on from: what the bound counts."""
        best_step_s = 1 / self.best.mean if self.best.mean else None
        return self.prior_cost_s + self.bounded.cost_s(best_step_s)

    def _startup_s(self) -> float | None:
        """A worker pool's start-up, the longest measured in this run: under the start method in
        use (the loader's multiprocessing_context, or the process's). None before a pool started."""
        return max(
            (
                m.startup_s
                for m in self.measured.values()
                if m.startup_s is not None and m.config.num_workers > 0
            ),
            default=None,
        )

    def _pool_startup_s(self, config: LoaderConfig) -> float | None:
        """The start-up of `config`'s pool where it took its prefetch depth in place (no pool
        started: the step says none): the one its workers had when they started under another
        depth. Their first batches are the same at any depth."""
        return next(
            (
                m.startup_s
                for m in self.measured.values()
                if m.startup_s is not None and m.config.same_pool(config)
            ),
            None,
        )

    def _keeps_pool(self, config: LoaderConfig) -> bool:
        """Switching to `config` starts no pool: it runs already, or it changes the running
        pool's prefetch depth or turns persistence on, alone, which the loader applies in place
        (epoch.py, _keep_pool)."""
        return config == self.current or self.current.same_pool(config)

    def _startup_ahead_s(self, config: LoaderConfig) -> float:
        """What switching to `config` will spend starting its pool: none where it keeps the
        running pool or has no workers; unknown (none measured yet) counts as none."""
        if self._keeps_pool(config) or config.num_workers == 0:
            return 0.0
        return self._startup_s() or 0.0

    @property
    def _expected_steps(self) -> int | None:
        """Where a run of unknown length outlived its horizon after R steps: the length it is
        taken to reach, 1.5 R. Under the usual prior for a length seen only from inside it
        (P(length > t | length > R) = R / t), a run that has lasted R steps goes on to 1.5 R
        two times in three; a candidate that repays by then is tried. With 2 R (the median),
        the simulated bench's 3,000-step runs resumed at step 2,400 or 2,560 and ended before
        repaying (results/bench/online-resume)."""
        return self._outlived_at * 3 // 2 if self._outlived_at else None

    def _repays(self, config: LoaderConfig) -> bool:
        """Where the training's length is known, or expected (_expected_steps): whether
        measuring `config` (a switch, unless it runs already) can still repay its cost in the
        steps left (remaining.py). A resumed exploring's every candidate must: the grown bound
        alone would spend start-ups on a run that may not last to earn them back."""
        total = self.settings.total_steps or self._expected_steps
        if total is None or config == self.current or not self.best.mean:
            return True
        return Remaining(total, self.run_steps).repays(
            self.settings.measure_steps(config),
            1 / self.best.mean,
            self.best.starved_share,
            self._startup_ahead_s(config),
        )

    def _measure(self, request: Request) -> LoaderConfig:
        self._cpu_mark = None
        m = self.measured.setdefault(request.config, Measurement(request.config))
        if request.again:
            m.remeasure()
        else:
            m.resumed()
        self._request = request
        self._switched(request.config)
        return request.config

    def _switched(self, config: LoaderConfig) -> None:
        if config != self.current:  # its pool starts inside an epoch (or, at its end, the next)
            self._since_epoch_start = False
        self.current = config

    def _stop(self, reason: StopReason) -> LoaderConfig | None:
        """Exploring ends: the best so far, with persistent workers decided, from now on. On the
        bound of a run of unknown length it may resume (_resume): `_deferred` is then set, what
        it would measure next. Never on the horizon: `max_explore_steps` bounds the exploring
        steps the user allows."""
        self.exploring = False
        self.stop_reason = reason
        if reason is not StopReason.BOUND:  # (a run of known length has no share bound)
            self._deferred = None
        running_m = self.measurement_of(self.current)
        if (
            reason is StopReason.RUN_END
            and running_m is not None
            and running_m is not self.best
            and self.verdict(self.best, running_m) is Verdict.TIED
        ):
            # A candidate tied with the best runs now: on a run too short to repay exploring, a
            # switch back (a pool's start-up) costs more than the cheaper configuration saves.
            self.best = running_m
        chosen = self._persistence(self.best.config)
        running = self.current
        self.current = chosen
        self.settled = Measurement(chosen)
        if chosen == running:
            return None
        if running.same_pool(chosen):  # the loader keeps the running pool, made persistent
            return chosen
        if replace(chosen, persistent_workers=running.persistent_workers) == running:
            return None  # persistence off acts at the next epoch's start: no restart for it now
        self._since_epoch_start = False
        return chosen

    # -- the plan: configurations to measure, each judged against the best so far ------------

    def _plan(self) -> Generator[Request, Verdict, None]:
        s = self.settings
        if "num_workers" in self.tuned:
            jump = self._needed()
            if jump is not None:
                yield from self._try(self._jumped(self.range.admit(jump)))
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
        does not restart them, and the choice of persistence at the end switches nothing.
        Where CUDA is used and pin_memory is tuned, candidates are pinned: the exploration bound
        can end a climb before its pin step, and unpinned copies are slower on a GPU
        (results/gpu/2026-11-26-h200.md). The plan's pin step still measures the best
        unpinned, and a tie goes to it, the cheaper."""
        config = with_value(self.best.config, name, value)
        if "persistent_workers" in self.tuned and config.num_workers > 0:
            config = replace(config, persistent_workers=True)
        if name != "pin_memory" and "pin_memory" in self.tuned and self.settings.cuda:
            config = replace(config, pin_memory=True)
        return config

    def _jumped(self, workers: int) -> LoaderConfig:
        """The prediction's candidate: `workers`, at the prefetch depth a pool is first measured
        at (decision/prefetch.py: the shallowest where a window is a whole epoch)."""
        config = self._candidate("num_workers", workers)
        if "prefetch_factor" not in self.tuned or config.num_workers == 0:
            return config
        depth = first_depth(
            self.settings.whole_epochs, BY_NAME["prefetch_factor"].values, config.prefetch_factor
        )
        return replace(config, prefetch_factor=depth)

    def _at_zero(self) -> Measurement | None:
        return next((m for m in self.measured.values() if m.config.num_workers == 0 and m.n), None)

    def _fetched(self) -> Measurement | None:
        """Where one worker's fetch is read from (predict.py, which also asks a pool to be
        starved): the run's measurement at num_workers=0, else the best where its workers' CPU
        was read (a run that starts with workers need not pay a main-process fetch to predict)."""
        zero = self._at_zero()
        if zero is not None:
            return zero
        best = self.best
        return best if best.workers_cores is not None and best.n else None

    def _needed(self) -> int | None:
        """The prediction, capped by the cores alone (the range's top and limit apply where it is
        tried): past the top, the range is asked to grow."""
        # Imported here: the offline probes' model behind it is needed only where a run starts
        # at num_workers=0, never in a run that starts from its memory (each rank imports the
        # online path before its first step).
        from autotune.online.predict import needed_workers

        return needed_workers(self._fetched(), self.best, self.settings.usable_cpus, UNCAPPED)

    def _rung(self, workers: int, direction: int) -> int | None:
        """The next worker count up or down the ladder (the range's top and the counts measured
        are rungs too)."""
        top = self.range.top
        ladder = sorted(
            {
                *(w for w in WORKER_LADDER if w <= top),
                top,
                *(m.config.num_workers for m in self.measured.values()),
            }
        )
        i = ladder.index(workers) + direction
        return ladder[i] if 0 <= i < len(ladder) else None

    def _deeper(self) -> list[LoaderConfig]:
        """For a starved loop, cheapest first: a deeper prefetch, then more workers (at least the
        next rung, more where its own rate says the step needs them); more workers first where
        the pool is short of them by more than a rung (decision/worker_range.py's
        `count_short`: a deeper prefetch adds no throughput)."""
        config = self.best.config
        deeper_pf: list[LoaderConfig] = []
        more: list[LoaderConfig] = []
        pf = BY_NAME["prefetch_factor"]
        if "prefetch_factor" in self.tuned and config.num_workers > 0:
            deeper = [v for v in pf.values if v > pf.effective(config.prefetch_factor)]
            if deeper:
                deeper_pf.append(self._candidate("prefetch_factor", deeper[0]))
        if "num_workers" in self.tuned:
            needed = self._needed()
            rung = self._rung(config.num_workers, 1)
            if rung is None and self._may_grow(needed):
                rung = self._rung(config.num_workers, 1)
            if rung is not None:
                wanted = self.range.admit(max(rung, needed or 0))
                more.append(self._candidate("num_workers", wanted))
                if count_short(config.num_workers, self.best.starved_share, rung):
                    return more + deeper_pf
        return deeper_pf + more

    def _may_grow(self, needed: int | None) -> bool:
        """The best sits at the range's top: the one range's rules decide whether it grows. A
        prediction within the top says more workers would compute (the fetch measured computes
        and the cores are spoken for)."""
        fetched = self._fetched()
        computes = (
            f"the loop waits, but the fetch measured at {fetched.config.label()} computes: the"
            f" cores allow {needed} workers, within the top of {self.range.top}"
            if needed is not None and needed <= self.range.top and fetched is not None
            else None
        )
        return self.range.grow(self._evidence(computes))

    def _evidence(self, computes: str | None) -> Evidence:
        setting = self._setting()
        rates: dict[int, float] = {}
        for m in self.measured.values():
            if m.n and not m.failed:
                n = m.config.num_workers
                rates[n] = max(rates.get(n, 0.0), rate_at(self.epoch_parts(m), setting, m.mean))
        best = self.best
        return Evidence(
            label=best.config.label(),
            workers=best.config.num_workers,
            rate=rate_at(self.epoch_parts(best), setting, best.mean),
            rate_by_workers=rates,
            wait_share=best.starved_share,
            computes=computes,
        )

    def _try(self, config: LoaderConfig) -> Generator[Request, Verdict, bool]:
        """Measure `config` against the best so far (unless measured already); True when it
        took the best's place."""
        if config == self.best.config:
            return False
        known = self.measured.get(config)
        if known is not None and known.failed:
            return False
        verdict = (
            self.verdict(self.best, known)
            if known is not None and known.n
            else (yield Request(config))
        )
        cand = self.measured[config]
        if (
            verdict is not Verdict.OPEN
            and not cand.failed
            and self.best.fresh_from == 0
            and brain.unresolved(self._compared(self.best, cand))
        ):
            # Measured all it may be and still within the noise of a best that its own windows
            # made the best: those read high by their selection, and the difference alone would
            # decide on them. The best is measured again, and judged on its new windows.
            yield Request(self.best.config, again=True)
            verdict = self.verdict(self.best, cand)
        return self._adopt(cand, verdict)

    def _refused(self, request: Request) -> bool:
        """A new candidate whose pool would not fit in RAM or /dev/shm now is not started (it
        would be killed, or fill /dev/shm, mid-epoch): it is recorded as not run."""
        if request.again or request.config in self.measured:
            return False
        refused = self.room(request.config)
        if refused is not None:
            self.measured[request.config] = Measurement(
                request.config, failed=f"{NOT_RUN}{refused}"
            )
        return refused is not None

    def _adopt(self, cand: Measurement, verdict: Verdict) -> bool:
        """`cand` takes the best's place if faster beyond noise, or tied and cheaper (unless it
        waits for batches not yet made a real share more than the best: decision/verdict.py's
        `takes_tie`)."""
        if cand.failed:
            return False
        # RAM ranks only where both were read (a reading runs on a thread and may not be in yet):
        # an unread one would count as none held.
        rams = (cand.ram_mib, self.best.ram_mib)
        cand_ram, best_ram = (None, None) if None in rams else rams
        cheaper = cost(cand.config, cand_ram) < cost(self.best.config, best_ram)
        tie = cheaper and brain.takes_tie(cand.short_share, self.best.short_share)
        if verdict is Verdict.BETTER or (verdict is Verdict.TIED and tie):
            self.best = cand
            return True
        return False

    def _confirm(self) -> Generator[Request, Verdict, None]:
        """The winner's curse: a best chosen over a rival within noise was selected for its high
        windows. It is measured again, judged on the new windows alone, and the rival re-judged.
        So is a best measured in fewer than `min_windows` windows, however far its rival."""
        rivals = [m for m in self.measured.values() if m is not self.best and m.n and not m.failed]
        if not rivals:
            return
        rival = max(rivals, key=lambda m: m.mean)
        # A best measured in fewer windows than a candidate needs (the start's one window, taken
        # to predict the climb) is measured again whatever the verdict: one window against a
        # candidate's min_windows decides on that one window's luck. Otherwise the band decides,
        # not the verdict: a rival measured to max_windows is exhausted, and the verdict's
        # fallback would then let the difference alone pick a best of two lucky windows. A rival
        # faster beyond the band is no reason to stop: fewer workers, each tied with the best
        # before it and cheaper, can step down in ties until the last lies beyond the band of
        # the fastest; the best is measured again, and the rival taken where it still is faster.
        short = self.best.n < self.settings.min_windows
        compared = self._compared(self.best, rival)
        if not short and compared.separated and not compared.cand_faster:
            return
        yield Request(self.best.config, again=True)
        self._adopt(rival, self.verdict(self.best, rival))

    def _persistence(self, config: LoaderConfig) -> LoaderConfig:
        call = self.persistence(config)
        return config if call is None else replace(config, persistent_workers=call.keep)

    def persistence(self, config: LoaderConfig) -> PersistenceCall | None:
        """persistent_workers where the one rule says it matters (decision/verdict.py, as the
        offline search's twin and epoch advice read it) or cannot tell: the chosen pool's
        measured start-up, paid again every epoch, against an epoch at its rate. None where it
        is not the climb's to decide (not tuned, or no pool)."""
        if "persistent_workers" not in self.tuned or config.num_workers == 0:
            return None
        m = self.measured.get(config)
        epoch_s = (
            None
            if m is None or not m.mean or self.settings.epoch_steps is None
            else self.settings.epoch_steps / m.mean
        )
        startup = None if m is None else m.startup_s
        if self.start.persistent_workers:  # the script's own choice: a tie is no reason to undo it
            return PersistenceCall(True, Persisted.SCRIPT, startup, epoch_s)
        # Unknown (no epoch length, no start-up measured) keeps the workers: a restart is never
        # cheaper than none.
        matters = brain.persistence_matters(startup, epoch_s)
        why = {True: Persisted.MATTERS, False: Persisted.NEGLIGIBLE, None: Persisted.UNKNOWN}[
            matters
        ]
        return PersistenceCall(matters is not False, why, startup, epoch_s)

    # -- the statistics: the one brain's (decision/verdict.py) -------------------------------

    def epoch_parts(self, m: Measurement, rate: float | None = None) -> EpochParts:
        """`m`'s parts for the epoch model (decision/epoch_time.py), in steps, at its windows'
        rate (or one window's `rate`): its pool's measured start-up is a fresh restart; windows of
        whole epochs hold one restart each, taken out of the steady rate where it was fresh (a
        persistent pool's refill stays in: it is paid with persistent workers too)."""
        s, config = self.settings, m.config
        rate = m.mean if rate is None else rate
        fresh = (m.startup_s or 0.0) if config.num_workers > 0 else 0.0
        persistent = config.persistent_workers and config.num_workers > 0
        holds_restart = s.windowed_by_epoch(config) and not persistent
        steady = steady_of(rate, s.epoch_steps, fresh) if holds_restart else rate
        return EpochParts(steady, m.startup_s, None, s.epoch_steps, persistent)

    def _setting(self) -> bool | None:
        """The persistence setting worker counts are compared at (epoch_time.shared_setting)."""
        return shared_setting(
            self.epoch_parts(m) for m in self.measured.values() if m.n and not m.failed
        )

    def _pieces(self, m: Measurement, setting: bool | None) -> brain.Pieces:
        """`m`'s windows at the compared persistence setting: as measured, unless restarts matter
        and it ran under the other, when each window is the epoch model's for `setting`."""
        pieces = m.pieces
        if setting is None or m.config.num_workers == 0 or m.config.persistent_workers == setting:
            return pieces
        rates = tuple(self.epoch_parts(m, r).rate(setting) for r in pieces.rates)
        return replace(pieces, rates=rates)

    def noise_cv(self) -> float | None:
        """One window's noise (decision/verdict.py, as the offline search's of one burst)."""
        return brain.noise_cv([m.pieces for m in self.measured.values()])

    def verdict(self, best: Measurement, cand: Measurement) -> Verdict:
        """`cand` against `best`: a failed one is worse; else the one verdict, open until
        `min_windows` and exhausted after `max_windows`."""
        if cand.failed:
            return Verdict.WORSE
        s = self.settings
        mine, theirs, cv, paired_cv = self._evidence_of(best, cand)
        return brain.verdict(
            mine,
            theirs,
            cv,
            exhausted=cand.n >= s.max_windows,
            least=s.min_windows,
            paired_cv=paired_cv,
        )

    def _compared(self, best: Measurement, cand: Measurement) -> brain.Comparison:
        """The two speeds and the band the noise allows between them (decision/verdict.py)."""
        return brain.compare(*self._evidence_of(best, cand))

    def _evidence_of(
        self, best: Measurement, cand: Measurement
    ) -> tuple[brain.Pieces, brain.Pieces, float | None, float | None]:
        """`best` and `cand`'s windows at the compared persistence setting, one window's noise
        and the noise of pairs of windows taken back to back, as the one brain reads them."""
        setting = self._setting()
        mine = self._pieces(best, setting)
        others = [self._pieces(m, setting) for m in self.measured.values() if m is not best]
        return mine, self._pieces(cand, setting), self.noise_cv(), brain.paired_noise(mine, others)
