"""The phases of a tuning, in order: probe the two ceilings, search from seeds near the
prediction, re-measure the best few until the choice is sound, (record.py: measure the chosen one
again for the recipe's rate), probe the loader alone at the chosen worker count, and time the chosen
configuration's pipeline stages. Each runs its trials through the TrialRunner and ends early on a
stop signal or when the budget runs out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, TypeVar

from autotune.burst.epoch import epoch_length
from autotune.burst.epoch_window import measured_whole
from autotune.decision.verdict import persistence_matters
from autotune.diagnosis.effects import rates_at
from autotune.errors import AutotuneError
from autotune.probe.ceilings import Ceilings
from autotune.probe.run import PROBE_SETTINGS, probe_loader, run_probes
from autotune.profiling.stage_run import StageProfile, profile_stages
from autotune.search.choose import Candidate, choose, group, pick_best
from autotune.search.confirm import (
    MAX_MEASUREMENTS,
    MEASUREMENTS,
    out_of_band,
    rounds,
    still_tied,
    to_confirm,
)
from autotune.search.interrupt import StopRequested
from autotune.search.ledger import StudyLedger
from autotune.search.record import bursts_needed
from autotune.search.search_range import SearchRange
from autotune.search.seeding import Whole, main_process_configs, seed_configs
from autotune.search.stopping import StopRules
from autotune.search.trial import Phase, TrialRecord
from autotune.search.trial_runner import Bursts, TrialRunner, abandon
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.space import SearchSpace

# A sampler that proposed this many taken points in a row has converged on them (answered with
# no observation, it would go on): the search continues from the nearest untaken point instead.
REPEATS_BEFORE_FALLBACK = 3
# This many failed bursts and not one success, PyTorch's defaults among them: the workload
# itself is broken, and spending the rest of the budget would only repeat the error.
BROKEN_AFTER_FAILURES = 3
ALL_TAKEN = "every configuration is measured or being measured"

T = TypeVar("T")

# Kept back from the search for the stage profile: one short burst and the alternatives' timing.
STAGE_RESERVE_S = 4.0
STAGE_RESERVE_SHARE = 0.08  # of the budget, for short budgets
STAGE_WINDOW_S = 1.5  # the profile's window at most: the stage means settle within it


def stage_reserve(budget_s: float) -> float:
    return min(STAGE_RESERVE_S, STAGE_RESERVE_SHARE * budget_s)


def broken(trials: list[TrialRecord]) -> bool:
    """Failed again and again, PyTorch's defaults included, and never once succeeded."""
    measured = [t for t in trials if t.measured]
    return (
        len(measured) >= BROKEN_AFTER_FAILURES
        and not any(t.ok for t in measured)
        and any(t.config == PYTORCH_DEFAULTS for t in measured)
    )


# -- probes ---------------------------------------------------------------------------------
def _probing(runner: TrialRunner, measure: Callable[[], T]) -> T | None:
    """A probe (each under the burst time limit: probe/run.py); None when it fails (the trials
    then show why)."""
    try:
        with runner.stop.interruptible():
            return measure()
    except (AutotuneError, StopRequested):
        raise
    except Exception:
        return None


def probe(runner: TrialRunner, batch: object, space: SearchSpace) -> Ceilings | None:
    """The two ceilings; None where the probe batch could not be loaded or a probe failed (the
    search then starts unseeded)."""
    if batch is None:
        return None
    b = runner.bursts
    # The second loader probe only while at least half the budget is left for the search.
    return _probing(
        runner,
        lambda: run_probes(
            b.workload,
            batch,
            b.device,
            space,
            b.cpus,
            PROBE_SETTINGS,
            second=runner.budget.more_than_half_left,
            limit_s=b.options.time_limit,
            warmed_up=runner.budget.exclude,
        ),
    )


def loader_probe_s(ceilings: Ceilings | None, config: LoaderConfig) -> float:
    """What the loader probe at `config`'s DataLoader arguments will probably take (the longest
    loader probe so far); 0 where it will not run, having run at those arguments already."""
    if ceilings is None or ceilings.loader_probe_for(config) is not None:
        return 0.0
    return max((p.duration_s for p in ceilings.at_config.values()), default=0.0)


def loader_ceiling_at(runner: TrialRunner, ceilings: Ceilings, config: LoaderConfig) -> None:
    """The loader alone at the chosen configuration's own DataLoader arguments (its persistence
    and prefetch depth included, so that the ceiling bounds it), when not probed already and time
    allows (otherwise the recipe says the loader ceiling was not measured)."""
    if ceilings.loader_probe_for(config) is not None or runner.stop.requested:
        return
    if not runner.budget.fits(loader_probe_s(ceilings, config)):
        return
    b = runner.bursts
    # A bound on rates measured over a trial's window needs a window as long, and at least two
    # rounds of the pool's batches in flight: the probes' short window can end inside a deep
    # pool's start-up or one straggler's wait, and read below the rate it is meant to bound.
    settings = replace(
        PROBE_SETTINGS,
        min_seconds=max(PROBE_SETTINGS.min_seconds, b.options.min_seconds),
        min_steps=max(PROBE_SETTINGS.min_steps, 2 * config.prefetch_depth),
    )
    _probing(
        runner,
        lambda: ceilings.add(
            probe_loader(b.workload, config, settings, b.cpus, b.options.time_limit), config
        ),
    )


# -- search ---------------------------------------------------------------------------------
def _stop_reason(
    runner: TrialRunner, rules: StopRules | None, max_trials: int | None
) -> str | None:
    if runner.stop.requested:
        return f"stopped by {runner.stop.name}"
    if broken(runner.trials):
        return "the workload failed in every configuration"
    searched = [t for t in runner.trials if t.measured and t.phase == Phase.SEARCH]
    if max_trials is not None and len(searched) >= max_trials:
        return f"{len(searched)} trials (--trials)"
    if searched and not runner.budget.search_fits():
        return "budget"
    return rules.reason() if rules is not None else None


def _fall_back(runner: TrialRunner, ledger: StudyLedger, space: SearchSpace) -> bool:
    """Enqueue the untaken point nearest the best so far; False when every point is taken."""
    best = pick_best(runner.all_trials())
    near = best.config if best is not None else PYTORCH_DEFAULTS
    return ledger.enqueue_untaken(space.nearest_first(near), space.params) is not None


@dataclass
class Queue:
    """Points to measure before the sampler's own, handed to the study one at a time so that a
    point found urgent later (a persistent twin, a grown range) can go first."""

    ledger: StudyLedger
    space: Callable[[], SearchSpace]
    configs: list[LoaderConfig] = field(default_factory=list)

    def first(self, configs: list[LoaderConfig]) -> None:
        self.configs[:0] = configs

    def feed(self) -> None:
        """Enqueue the next point the study has not taken, unless one waits already."""
        if self.ledger.waiting():
            return
        while self.configs:
            if self.ledger.enqueue_once(self.space().params(self.configs.pop(0))):
                return


def search(
    runner: TrialRunner,
    ledger: StudyLedger,
    workers: SearchRange,
    ceilings: Ceilings | None,
    max_trials: int | None,
    early_stop: bool = True,
) -> str:
    """Ask, suggest, measure what the study does not know yet; why the search ended. Without
    `early_stop` only `max_trials`, the budget, a signal or an exhausted space end it. Where it
    would end on its own rules, the worker range may grow first (search_range.py)."""
    reason = _search(runner, ledger, workers, ceilings, max_trials, early_stop)
    workers.ended(reason)
    return reason


def _search(
    runner: TrialRunner,
    ledger: StudyLedger,
    workers: SearchRange,
    ceilings: Ceilings | None,
    max_trials: int | None,
    early_stop: bool,
) -> str:
    if ceilings is not None:
        workers.follow_prediction(ceilings, runner.guard)
        runner.context = workers.in_context(runner.context)
    # Trial 0 is PyTorch's defaults: every report shows the gain over it.
    seeds = [PYTORCH_DEFAULTS] + (
        seed_configs(ceilings, workers.space, whole_epochs(runner.bursts)) if ceilings else []
    )
    queue = Queue(ledger, lambda: workers.space, list(seeds))
    rules = StopRules(ceilings.device_samples_per_s if ceilings else 0.0, seeds=len(seeds))
    for earlier in runner.trials:  # resuming: what was measured before counts
        rules.update(earlier)
    repeats = 0
    while True:
        reason = _stop_reason(runner, rules if early_stop else None, max_trials)
        if reason is not None:
            if early_stop and reason == rules.reason() and _grown(runner, queue, workers, rules):
                continue
            return reason
        queue.feed()
        trial = runner.study.ask()
        config = workers.space.suggest(trial)
        if ledger.settle(trial, config) is not None:
            # Measured already (here, before a resume, or by another process) or being measured
            # elsewhere: closed without a record, or its point would weigh twice in the sampler.
            abandon(runner.study, trial)
            repeats += 1
            if repeats >= REPEATS_BEFORE_FALLBACK:
                repeats = 0
                if not _fall_back(runner, ledger, workers.space) and not _grown(
                    runner, queue, workers, rules
                ):
                    return ALL_TAKEN
            continue
        repeats = 0
        done = runner.run(config, Phase.SEARCH, trial)
        if done is None:
            return f"stopped by {runner.stop.name}"
        rules.update(done)
        twin = persistent_twin(runner.all_trials())
        if twin is not None and workers.space.params(twin).get("persistent_workers"):
            queue.first([twin])
            rules.restart(1)


def whole_epochs(bursts: Bursts) -> Whole:
    """Whether a configuration's burst times whole epochs of this workload's loader."""
    workload = bursts.workload
    batches = epoch_length(workload.make_loader(PYTORCH_DEFAULTS), workload.batch_size).batches
    return lambda config: measured_whole(batches, config.prefetch_depth, bursts.options.min_steps)


def persistent_twin(trials: list[TrialRecord]) -> LoaderConfig | None:
    """The persistent twin to measure next: of the configuration fastest at
    persistent_workers=True by the epoch model (decision/epoch_time.py: its steady rate with a
    persistent pool's refill), where it was measured without persistent workers and its epoch
    restart matters (decision/verdict.py, the online climb's rule too). The seeds are not
    persistent, and the sampler would take many trials to learn that this knob decides the epoch
    rate, and that worker counts slow without it are the fast ones with it: the model's pick is
    confirmed by one measurement rather than every worker count measured both ways."""
    # Compared by configuration (a shared study's records are copies); a twin measured already
    # stands for its configuration (effects.rates_at).
    rates = rates_at(trials, True)
    if not rates:
        return None
    top = max(rates.values(), key=lambda at: at.rate).config
    twin = replace(top, persistent_workers=True)
    if top.num_workers == 0 or top.persistent_workers or any(t.config == twin for t in trials):
        return None  # a twin measured and failed is not measured again
    last = next(t for t in reversed(trials) if t.config == top and t.ok)
    return twin if persistence_matters(last.burst.restart_cost_s, last.burst.epoch_s) else None


def _grown(runner: TrialRunner, queue: Queue, workers: SearchRange, rules: StopRules) -> bool:
    """Grow the worker range where it should (its new points first, patience restarted)."""
    if not runner.budget.search_fits():
        workers.ended("budget")
        return False
    fresh = workers.grow(runner.all_trials(), runner.guard, runner.context)
    if not fresh:
        return False
    runner.context = workers.in_context(runner.context)
    queue.first(fresh)
    rules.restart(len(fresh))
    return True


# -- confirm --------------------------------------------------------------------------------
def confirm(runner: TrialRunner, space: SearchSpace) -> None:
    """Re-measure the best few, then, sequentially, those still tied, until the choice is sound."""
    if runner.stop.requested or broken(runner.trials):
        return
    configs = to_confirm(
        group(runner.all_trials()), space, always=main_process_configs(runner.ceilings, space)
    )
    for measurements in range(MEASUREMENTS, MAX_MEASUREMENTS + 1):
        if not configs or not _remeasure(runner, configs, measurements):
            return
        configs = still_tied(group(runner.all_trials()))


def _remeasure(runner: TrialRunner, configs: list[LoaderConfig], measurements: int) -> bool:
    """Round-robin until each has `measurements`; False when time or a signal cut it short. The
    first round (MEASUREMENTS) keeps back the first record burst only: the choice must rest on two
    measurements of each contender (keeping back every record burst the noise calls for can leave
    it resting on one on a short budget). The tie rounds keep back as many as the noise calls for
    (_record_bursts)."""
    counts = {c.config: len(c.trials) for c in group(runner.all_trials())}
    for config in rounds(configs, counts, measurements):
        candidates = group(runner.all_trials())
        keep = _record_bursts(candidates) if measurements > MEASUREMENTS else 1
        if not runner.budget.fits_before_record(keep):
            return False
        if any(t.config == config and t.measured and not t.ok for t in runner.trials):
            continue  # failed, pruned or rejected once: not a candidate any more
        if out_of_band(config, candidates):
            continue  # measured far behind the fastest: no longer a contender
        if runner.run(config, Phase.CONFIRM) is None:
            return False
    return True


def _record_bursts(candidates: list[Candidate]) -> int:
    """The record bursts the noise measured so far calls for, kept back from the tie rounds: on a
    noisy machine, more of them cannot resolve a tie to TARGET, while the record's rate still
    gains from each burst."""
    choice = choose(candidates)
    return bursts_needed([], choice.record_noise_cv if choice is not None else None)


# -- stages ---------------------------------------------------------------------------------
def stage_profile(runner: TrialRunner, config: LoaderConfig) -> StageProfile | None:
    """The chosen configuration's stages timed in one short burst, in the time held back for it;
    None when stopped or when the profile fails (the tuning's result does not depend on it)."""
    budget, b = runner.budget, runner.bursts
    budget.release_hold()
    if runner.stop.requested or budget.time_left() <= 0:
        return None
    window = min(STAGE_WINDOW_S, b.options.max_seconds, budget.window_cap(b.options.min_seconds))
    try:
        with runner.stop.interruptible():
            return profile_stages(b.workload, config, b.device, b.options.settings(window), b.cpus)
    except (StopRequested, AutotuneError):
        return None
    except Exception:  # a burst that passed before failed now: the profile is left out
        return None
