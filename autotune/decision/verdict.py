"""The verdicts both drivers reach on what they measured: the offline search on bursts
(search/choose.py, confirm.py), the online climb on windows of the loop's own steps
(online/policy.py). Each answer is a function here, fed the same typed measurements by both:

- which pieces of a configuration count (`Pieces.fresh`: the winner's curse),
- the noise one piece carries (`noise_cv`),
- whether two configurations tie (`verdict`),
- whether persistent_workers matters (`persistence_matters`).

Bursts and windows differ in how many pieces their drivers take, and nothing else here: the
verdict's `least` and `exhausted` say how few a driver judges on and when it takes no more."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from autotune.decision.rate import pooled_cv, pooled_rate, tolerance
from autotune.decision.thresholds import MATTERS_SHARE, TARGET
from autotune.strenum import StrEnum


class Verdict(StrEnum):
    """A candidate against the best so far."""

    BETTER = "better"
    WORSE = "worse"
    TIED = "tied"
    OPEN = "open"  # not measured enough to tell: needs more measurements


@dataclass(frozen=True)
class Pieces:
    """One configuration's measurements in the order taken: each piece's rate and the seconds it
    is over (a burst offline, a window online). `selected_at` is the index of the first piece
    measured after the configuration was selected for looking fast (re-measured: the confirm
    phase offline, the climb's last step online); None where it never was."""

    rates: tuple[float, ...]
    spans: tuple[float, ...]
    selected_at: int | None = None

    @property
    def fresh(self) -> tuple[float, ...]:
        """The winner's curse: a configuration selected for its high pieces is judged, and its
        figure recorded, on the pieces measured after it was selected alone (none yet: none
        count). Never selected, every piece counts. Assumes the pieces before the selection are
        biased upwards by it and the later ones are not."""
        return self.rates if self.selected_at is None else self.rates[self.selected_at :]

    @property
    def fresh_spans(self) -> tuple[float, ...]:
        return self.spans if self.selected_at is None else self.spans[self.selected_at :]

    @property
    def n(self) -> int:
        """The pieces behind `mean`."""
        return len(self.fresh)

    @property
    def mean(self) -> float:
        """The fresh pieces' work over their time (rate.pooled_rate); 0.0 where none."""
        return pooled_rate(self.fresh, self.fresh_spans) if self.fresh else 0.0

    @property
    def shown(self) -> Pieces:
        """The pieces behind the figure a report records: the fresh ones, else (selected, none
        fresh yet) every one, so that a configuration is never named without the rate it was
        chosen on."""
        return self if self.fresh else Pieces(self.rates, self.spans)

    @property
    def shown_mean(self) -> float:
        return self.shown.mean


def noise_cv(groups: Sequence[Pieces]) -> float | None:
    """One piece's relative noise: rate.pooled_cv over the configurations' pieces, a
    configuration's fresh pieces standing for it where it has two or more. The pieces that
    selected it for re-measurement were selected for being high: they widen the spread with
    their luck, not the machine's noise, bursts and windows alike. None until some configuration
    has two pieces. Assumes one noise for every configuration (the pooling)."""
    return pooled_cv([g.fresh if len(g.fresh) >= 2 else g.rates for g in groups])


def band(best: Pieces, cand: Pieces, cv: float | None) -> float:
    """How far below the faster mean the slower may be and still tie: rate.tolerance, Z standard
    errors of the difference of the two means at noise `cv`, never below TOLERANCE_FLOOR."""
    return tolerance(cv, best.n, cand.n)


def verdict(
    best: Pieces, cand: Pieces, cv: float | None, *, exhausted: bool, least: int = 1
) -> Verdict:
    """`cand` against `best`. The slower mean is compared with the faster: below
    faster × (1 − band) (`band`) the faster is BETTER (the other WORSE); within it the two are
    TIED once the band is down to TARGET, else OPEN (more pieces would narrow it) until
    `exhausted` (no more will be measured), when the means decide: TIED within TARGET, else the
    faster wins. OPEN while `cand` has fewer than `least` fresh pieces or `best` has no rate.
    Assumes independent pieces with one noise `cv` shared by every configuration."""
    if cand.n < least or best.n == 0 or best.mean <= 0:
        return Verdict.OPEN
    width = band(best, cand, cv)
    faster, slower = max(best.mean, cand.mean), min(best.mean, cand.mean)
    wins = Verdict.BETTER if cand.mean > best.mean else Verdict.WORSE
    if slower < faster * (1 - width):
        return wins
    if width <= TARGET:
        return Verdict.TIED
    if not exhausted:
        return Verdict.OPEN
    # Measured all it may be and still unresolved: a large difference is not a tie for being
    # noisy, so the means decide beyond TARGET.
    return Verdict.TIED if slower >= faster * (1 - TARGET) else wins


def persistence_matters(
    restart_s: float | None, epoch_s: float | None, measured_gain: float | None = None
) -> bool | None:
    """Whether persistent_workers matters: an epoch's pool restart of `restart_s` costs
    MATTERS_SHARE of an epoch of `epoch_s` or more (restart_s ≥ MATTERS_SHARE × epoch_s), or a
    measured gain of persistence over whole epochs (rate ratio − 1) is MATTERS_SHARE or more.
    None where neither is known. Assumes the restart is paid once per epoch, and that below
    MATTERS_SHARE a difference is within the noise."""
    if measured_gain is not None and measured_gain >= MATTERS_SHARE:
        return True
    if restart_s is None or epoch_s is None or epoch_s <= 0:
        return None if measured_gain is None else False
    return restart_s >= MATTERS_SHARE * epoch_s
