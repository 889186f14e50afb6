"""The verdicts both drivers reach on what they measured: the offline search on bursts
(search/choose.py, confirm.py), the online climb on windows of the loop's own steps
(online/policy.py). Each answer is a function here, fed the same typed measurements by both:

- which pieces of a configuration count (`Pieces.fresh`: the winner's curse; a stall never),
- the noise one piece carries (`noise_cv`),
- whether two configurations tie (`verdict`), on the ratios of pieces measured back to back
  where they alternated (A, B, A, B: `pairs`), else on their means,
- whether persistent_workers matters (`persistence_matters`),
- whether a wait is a real share of the loop's time (`starved`), and whether a tie goes to the
  cheaper of two configurations (`takes_tie`).

Bursts and windows differ in how many pieces their drivers take, and nothing else here: the
verdict's `least` and `exhausted` say how few a driver judges on and when it takes no more."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence, TypeVar

from autotune.decision.rate import pooled_cv, pooled_rate, pooled_sd, tolerance
from autotune.decision.thresholds import (
    MATTERS_SHARE,
    STALL_PIECES,
    STALL_SHARE,
    TARGET,
    TOLERANCE_FLOOR,
    WAITS_SHARE,
    Z,
)
from autotune.strenum import StrEnum

T = TypeVar("T")


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
    phase offline, the climb's last step online); None where it never was. `at` is when each
    piece was taken, on one clock shared by every configuration of a driver (a trial's number,
    a window's order), None for a piece from elsewhere (another run); empty: not known."""

    rates: tuple[float, ...]
    spans: tuple[float, ...]
    selected_at: int | None = None
    at: tuple[float | None, ...] = ()

    @property
    def stalled(self) -> tuple[bool, ...]:
        """Which pieces are stalls (thresholds.STALL_SHARE): below that share of the median of
        its pieces, where there are STALL_PIECES or more. A stall counts in no mean, noise or
        pair: a pause (a garbage collection, of the main process or of a worker) is not the
        configuration's rate. Assumes that such a pause is as likely in any configuration's
        piece, so that leaving it out of every one biases none of them against another."""
        if len(self.rates) < STALL_PIECES:
            return (False,) * len(self.rates)
        floor = STALL_SHARE * statistics.median(self.rates)
        return tuple(r < floor for r in self.rates)

    @property
    def stalls(self) -> int:
        return sum(self.stalled)

    @property
    def steady(self) -> tuple[float, ...]:
        """Every piece's rate but the stalls'."""
        return self._kept(self.rates, 0)

    def _kept(self, values: Sequence[T], start: int) -> tuple[T, ...]:
        return tuple(v for v, s in zip(values, self.stalled[start:], strict=True) if not s)

    @property
    def _from(self) -> int:
        return 0 if self.selected_at is None else self.selected_at

    @property
    def fresh(self) -> tuple[float, ...]:
        """The winner's curse: a configuration selected for its high pieces is judged, and its
        figure recorded, on the pieces measured after it was selected alone (none yet: none
        count). Never selected, every piece counts. Assumes the pieces before the selection are
        biased upwards by it and the later ones are not. Stalls never count."""
        return self._kept(self.rates[self._from :], self._from)

    @property
    def fresh_spans(self) -> tuple[float, ...]:
        return self._kept(self.spans[self._from :], self._from)

    @property
    def fresh_at(self) -> tuple[float | None, ...]:
        if len(self.at) != len(self.rates):
            return (None,) * len(self.fresh)
        return self._kept(self.at[self._from :], self._from)

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
        return self if self.fresh else Pieces(self.rates, self.spans, at=self.at)

    @property
    def shown_mean(self) -> float:
        return self.shown.mean


def noise_cv(groups: Sequence[Pieces]) -> float | None:
    """One piece's relative noise: rate.pooled_cv over the configurations' pieces but stalls, a
    configuration's fresh pieces standing for it where it has two or more. The pieces that
    selected it for re-measurement were selected for being high: they widen the spread with
    their luck, not the machine's noise, bursts and windows alike. None until some configuration
    has two pieces. Assumes one noise for every configuration (the pooling)."""
    return pooled_cv([g.fresh if len(g.fresh) >= 2 else g.steady for g in groups])


# Interleaved pieces are compared pair by pair from this many pairs on: fewer tell nothing of the
# pairs' own noise.
MIN_PAIRS = 2


def pairs(best: Pieces, cand: Pieces) -> tuple[float, ...]:
    """ln(best / cand) of each pair of fresh pieces taken back to back (A, B or B, A with neither
    measured in between), each piece in one pair at most. The machine's slow drift (another job,
    a warming cache, a throttled clock) moves both pieces of a pair alike and cancels in their
    ratio; between independent means it counts as noise, or as a difference where it favoured
    one. Assumes the drift between two neighbouring pieces is small against the difference."""
    taken = sorted(
        [(t, 0, r) for t, r in zip(best.fresh_at, best.fresh, strict=True) if t is not None]
        + [(t, 1, r) for t, r in zip(cand.fresh_at, cand.fresh, strict=True) if t is not None]
    )
    out, i = [], 0
    while i + 1 < len(taken):
        (_, who, rate), (_, other, rate2) = taken[i], taken[i + 1]
        if who != other and rate > 0 and rate2 > 0:
            b, c = (rate, rate2) if who == 0 else (rate2, rate)
            out.append(math.log(b / c))
            i += 2
        else:
            i += 1
    return tuple(out)


def paired_noise(best: Pieces, others: Sequence[Pieces]) -> float | None:
    """The noise of one pair's log-ratio, pooled over every other configuration's pairs with
    `best` (MIN_PAIRS or more each); None where none has that many. Assumes one noise for every
    pair, as noise_cv assumes one for every piece."""
    groups = [pairs(best, other) for other in others if other is not best]
    return pooled_sd([d for d in groups if len(d) >= MIN_PAIRS])


@dataclass(frozen=True)
class Comparison:
    """Two configurations' speeds: the slower over the faster, which is faster, and the band
    within which they may tie; `paired` is the number of interleaved pairs behind it (0: the two
    means, independent pieces)."""

    slower_share: float
    cand_faster: bool
    band: float
    paired: int

    @property
    def separated(self) -> bool:
        """The slower lies below the faster × (1 − band): the noise does not explain the gap."""
        return self.slower_share < 1 - self.band


def compare(
    best: Pieces, cand: Pieces, cv: float | None, paired_cv: float | None = None
) -> Comparison:
    """Where the two alternated for MIN_PAIRS pairs or more and the pairs' noise is known: the
    geometric mean of the pairs' ratios, within Z standard errors of it (never below
    TOLERANCE_FLOOR). Else the two means, within rate.tolerance: Z standard errors of their
    difference at one piece's noise `cv`."""
    d = pairs(best, cand)
    if paired_cv is not None and len(d) >= MIN_PAIRS:
        ratio = math.exp(statistics.fmean(d))  # best / cand
        width = max(TOLERANCE_FLOOR, Z * paired_cv / math.sqrt(len(d)))
        return Comparison(min(ratio, 1 / ratio), ratio < 1, width, len(d))
    faster, slower = max(best.mean, cand.mean), min(best.mean, cand.mean)
    return Comparison(
        slower / faster if faster > 0 else 1.0,
        cand.mean > best.mean,
        tolerance(cv, best.n, cand.n),
        0,
    )


def band(best: Pieces, cand: Pieces, cv: float | None, paired_cv: float | None = None) -> float:
    """How far below the faster the slower may be and still tie (`compare`)."""
    return compare(best, cand, cv, paired_cv).band


def unresolved(c: Comparison) -> bool:
    """Within the band, and the band wider than TARGET: the machine has not told the two apart,
    and only more pieces (or, where no more are taken, the difference alone) can decide. A best
    whose pieces are all those that made it the best is measured again before such a verdict is
    taken against it (the winner's curse: the offline search's confirm phase, the online climb's
    re-measure), so that the difference read is not its luck."""
    return not c.separated and c.band > TARGET


def verdict(
    best: Pieces,
    cand: Pieces,
    cv: float | None,
    *,
    exhausted: bool,
    least: int = 1,
    paired_cv: float | None = None,
) -> Verdict:
    """`cand` against `best` (`compare`: pair by pair where they alternated, else their means).
    The slower below the faster × (1 − band): the faster is BETTER (the other WORSE); within it
    the two are TIED once the band is down to TARGET, else OPEN (more pieces would narrow it)
    until `exhausted` (no more will be measured), when the machine could not separate them and
    the difference decides: TIED within TARGET, else the faster wins. OPEN while `cand` has fewer
    than `least` fresh pieces or `best` has no rate. Assumes independent pieces (or pairs) with
    one noise shared by every configuration."""
    if cand.n < least or best.n == 0 or best.mean <= 0:
        return Verdict.OPEN
    c = compare(best, cand, cv, paired_cv)
    wins = Verdict.BETTER if c.cand_faster else Verdict.WORSE
    if c.separated:
        return wins
    if not unresolved(c):
        return Verdict.TIED
    if not exhausted:
        return Verdict.OPEN
    # Measured all it may be and still unresolved: a large difference is not a tie for being
    # noisy, so the difference decides beyond TARGET.
    return Verdict.TIED if c.slower_share >= 1 - TARGET else wins


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


def starved(share: float | None) -> bool:
    """A wait of `share` of the loop's time is a real one: WAITS_SHARE or more. None: unknown."""
    return share is not None and share >= WAITS_SHARE


def takes_tie(cheaper: float | None, other: float | None) -> bool:
    """Whether the cheaper of two tied configurations is chosen, from the share of its time each
    one's loop waited for batches not yet made (burst/window.py's PullWaits: hand-overs of ready
    batches left out; None: unknown, counted as none): not where the cheaper one's exceeds the
    other's by a real share (WAITS_SHARE). That wait is time its steps lose and the other's do
    not, which the rates' noise can hide: a loader with stragglers delivers in convoys, and its
    windows scatter by more than the difference between a fed pool and a starved one
    (results/bench/climb-sim). The difference decides, not each share against the threshold:
    two pools that wait alike on either side of it are tied in that too
    (results/bench/offline-tie)."""
    return (cheaper or 0.0) - (other or 0.0) < WAITS_SHARE
