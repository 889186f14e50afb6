"""Which measured configuration becomes the recipe: the cheapest within noise of the best.

Every configuration's measurements are pooled into a Candidate. The noise is estimated from the
configurations measured more than once, and only those compete, where two or more were: one lucky
burst must not win.
Among them, those whose mean throughput is within noise of the fastest mean are tied, and the
cheapest wins, in the knob registry's cost order: fewest workers, then smallest prefetch, then
least RAM, then no pinning. Where the budget ended before the tie was resolved (band wider than
TARGET), the cheapest within TARGET of the fastest mean wins instead, and the recipe names the
unresolved ties.

The verdicts are decision/verdict.py's, as the online climb's are: the fastest against each
candidate, with the budget's end as the point where no more measurements come.

"Within noise" is never narrower than the noise measured: the band is Z standard errors of the
difference of two means, however wide. The confirm phase re-measures tied candidates until that
band is down to TARGET (or the budget ends), so a wide band means a choice made on too little
time, and the recipe says which configurations it could not tell apart.

A candidate's mean is over its re-measurements alone when it has any: the search burst that made
it look fast enough to be re-measured was selected for being high (the winner's curse). The
chosen one was selected again, among the re-measured, for its high mean: the rate the recipe
records comes from the record bursts measured after the choice (record.py, `record_bursts`);
the first always runs, in a reserve of the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.decision import verdict as brain
from autotune.decision.cost import cost
from autotune.decision.rate import measured_cv
from autotune.decision.thresholds import TARGET, TOLERANCE_FLOOR
from autotune.decision.verdict import Pieces, Verdict
from autotune.search.trial import Phase, TrialRecord, TrialStatus
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig


def pick_best(trials: list[TrialRecord]) -> TrialRecord | None:
    measured = [t for t in trials if t.ok]
    return max(measured, key=lambda t: t.rate) if measured else None


def find_baseline(trials: list[TrialRecord]) -> TrialRecord | None:
    """The trial of PyTorch's defaults (in a shared study, not necessarily this process's first)."""
    return next((t for t in trials if t.config == PYTORCH_DEFAULTS), trials[0] if trials else None)


@dataclass(frozen=True)
class Candidate:
    config: LoaderConfig
    trials: tuple[TrialRecord, ...]  # its usable measurements

    @property
    def rates(self) -> list[float]:
        return [t.rate for t in self.trials]

    @property
    def pieces(self) -> Pieces:
        """Its bursts for the one brain (decision/verdict.py): the re-measurements (CONFIRM)
        last, as the pieces measured after it was selected; none of them: never selected."""
        first = [t for t in self.trials if t.phase != Phase.CONFIRM]
        again = [t for t in self.trials if t.phase == Phase.CONFIRM]
        ordered = first + again
        return Pieces(
            tuple(t.rate for t in ordered),
            tuple(t.burst.window_s for t in ordered),
            len(first) if again else None,
            tuple(float(t.number) for t in ordered),  # the confirm rounds alternate (confirm.py)
        )

    @property
    def unbiased(self) -> list[float]:
        """The re-measurements where there are any (see the module's note), else every one."""
        return list(self.pieces.fresh)

    @property
    def n(self) -> int:
        """Every usable measurement, the search's own included."""
        return len(self.trials)

    @property
    def n_unbiased(self) -> int:
        """The measurements behind `mean`."""
        return self.pieces.n

    @property
    def mean(self) -> float:
        """The unbiased bursts' samples over their time (decision/verdict.py)."""
        return self.pieces.mean

    @property
    def unready_share(self) -> float:
        """The share of its bursts' windows the loop waited for batches not yet made
        (BurstResult.unready_share), over all of them."""
        window_s = sum(t.burst.window_s for t in self.trials)
        return sum(t.burst.unready_share * t.burst.window_s for t in self.trials) / max(
            window_s, 1e-12
        )

    @property
    def peak_pss_mib(self) -> float:
        return max(t.burst.host.peak_pss_mib for t in self.trials)

    def cost(self) -> tuple[float, ...]:
        """The one cost order (decision/cost.py), with the measured peak RAM."""
        return cost(self.config, self.peak_pss_mib)

    def representative(self) -> TrialRecord:
        """The measurement closest to the mean: the one whose details (shares, memory) are shown."""
        return min(self.trials, key=lambda t: abs(t.rate - self.mean))


def group(trials: list[TrialRecord]) -> list[Candidate]:
    """Usable measurements pooled per configuration; a configuration rejected once is out. The
    record bursts measured after a choice are not among them: they give the recipe its rate, and
    must not take part in the selection they are meant to be free of."""
    rejected = {t.config for t in trials if t.status == TrialStatus.REJECTED}
    by_config: dict[LoaderConfig, list[TrialRecord]] = {}
    for t in trials:
        if t.ok and t.config not in rejected and t.phase != Phase.RECORD:
            by_config.setdefault(t.config, []).append(t)
    return [Candidate(config, tuple(ts)) for config, ts in by_config.items()]


def noise_cv(candidates: list[Candidate]) -> float | None:
    """Pooled relative standard deviation of one burst; None until something was measured twice.
    The search bursts that selected a configuration are left out where it has two others."""
    return brain.noise_cv([c.pieces for c in candidates])


def paired_noise(fastest: Candidate, pool: list[Candidate]) -> float | None:
    """The noise of one interleaved pair's ratio with the fastest (decision/verdict.py)."""
    return brain.paired_noise(fastest.pieces, [c.pieces for c in pool])


def judge(
    fastest: Candidate,
    cand: Candidate,
    cv: float | None,
    exhausted: bool,
    paired_cv: float | None = None,
) -> Verdict:
    """`cand` against the fastest, by the one verdict (decision/verdict.py)."""
    return brain.verdict(fastest.pieces, cand.pieces, cv, exhausted=exhausted, paired_cv=paired_cv)


@dataclass(frozen=True)
class Choice:
    chosen: Candidate
    fastest: Candidate  # highest mean throughput
    equivalent: tuple[Candidate, ...]  # within noise of the fastest, cheapest first
    noise_cv: float | None
    band: float  # the widest tolerance that admitted a tied candidate (TOLERANCE_FLOOR if none)
    paired_cv: float | None = None  # one interleaved pair's noise (decision/verdict.py)
    # Interleaved pairs behind the widest band; 0: it was judged on independent means.
    pairs: int = 0

    @property
    def resolved(self) -> bool:
        """The measurements tell the tied candidates apart to within TARGET."""
        return self.band <= TARGET

    @property
    def record_noise_cv(self) -> float | None:
        """The noise the record plans for: the wider of the pooled noise and the chosen
        configuration's own spread over its re-measurements. A pooled figure cannot see one
        configuration that scatters more than the rest, and a record planned at it takes too few
        bursts (results/bench/deep-storage-noise)."""
        return measured_cv(self.chosen.unbiased, self.noise_cv)

    @property
    def ties(self) -> tuple[Candidate, ...]:
        """The other configurations the measurements could not tell apart from the chosen one."""
        return tuple(c for c in self.equivalent if c is not self.chosen)

    def unresolved(self) -> tuple[Candidate, ...]:
        """Tied candidates whose band is still wider than TARGET: more measurements could split
        them from the fastest (the fastest itself included when any is)."""
        wide = tuple(
            c
            for c in self.equivalent
            if c is not self.fastest
            and judge(self.fastest, c, self.noise_cv, False, self.paired_cv) is Verdict.OPEN
        )
        return (self.fastest, *wide) if wide else ()


def record_bursts(trials: list[TrialRecord], config: LoaderConfig) -> list[TrialRecord]:
    """`config`'s successful record bursts (Phase.RECORD)."""
    return [t for t in trials if t.ok and t.phase == Phase.RECORD and t.config == config]


def recorded(chosen: Candidate, trials: list[TrialRecord]) -> Pieces:
    """The chosen configuration's pieces for its recorded figure (Pieces.shown_mean, as the
    online climb's): its record bursts, measured after the choice, are the fresh ones; where
    none ran, its own unbiased bursts stand."""
    own = chosen.pieces
    records = record_bursts(trials, chosen.config)
    return Pieces(
        own.fresh + tuple(t.rate for t in records),
        own.fresh_spans + tuple(t.burst.window_s for t in records),
        len(own.fresh),
    )


def _wins(fastest: Candidate, c: Candidate, cv: float | None, pcv: float | None) -> bool:
    """Whether `c`, cheaper than the fastest mean and within its noise, is chosen over it: it is
    faster pair by pair, or tied, unless its loop waits for batches not yet made a real share
    more (brain.takes_tie)."""
    verdict = judge(fastest, c, cv, True, pcv)
    return verdict is Verdict.BETTER or (
        verdict is Verdict.TIED and brain.takes_tie(c.unready_share, fastest.unready_share)
    )


def choose(candidates: list[Candidate]) -> Choice | None:
    remeasured = [c for c in candidates if c.n >= 2]
    # One re-measured configuration alone is no contest: where the budget ended after a single
    # re-measurement, it would win by default against faster or cheaper ones measured once, on
    # one lucky burst.
    pool = remeasured if len(remeasured) >= 2 else candidates
    if not pool:
        return None
    cv = noise_cv(pool)
    fastest = max(pool, key=lambda c: c.mean)
    pcv = paired_noise(fastest, pool)
    # Within noise of the fastest: tied, or open (a band wider than TARGET).
    within = tuple(
        sorted(
            (c for c in pool if judge(fastest, c, cv, False, pcv) is not Verdict.WORSE),
            key=Candidate.cost,
        )
    )
    widest = max(
        (brain.compare(fastest.pieces, c.pieces, cv, pcv) for c in within if c is not fastest),
        key=lambda comparison: comparison.band,
        default=None,
    )
    # The budget ended: an open tie is a lack of measurements, not a finding of equal speed, and
    # the difference decides beyond TARGET (as the online climb's does after its most windows).
    # Pair by pair, a cheaper one may even be faster than the fastest mean (the means weigh
    # pieces taken on a slower machine): it wins as a tie would.
    chosen = next(c for c in within if c is fastest or _wins(fastest, c, cv, pcv))
    if widest is None:
        return Choice(chosen, fastest, within, cv, TOLERANCE_FLOOR, pcv)
    return Choice(chosen, fastest, within, cv, widest.band, pcv, widest.paired)
