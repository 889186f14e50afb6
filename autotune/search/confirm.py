"""Which configurations to re-measure before choosing, and in what order.

The fastest single measurement is partly luck, and so is which configuration comes second. The
two fastest and the cheapest measured near them are measured again, round-robin so that a slow
patch of the machine hits them all alike: one lucky burst cannot decide alone which
configurations compete. One worker fewer than the cheapest of them is added when never tried,
since the search samples worker counts coarsely and the cheapest equal configuration may sit just
below. Where the fetch probe found the items in memory, num_workers=0 is re-measured as well
(seeding.main_process_configs): a noisy first burst must not leave the cheapest out.

Then, sequentially: while the choice still has candidates tied with the fastest on a band wider
than choose.TARGET (the noise measured so far cannot tell them apart), those are measured again,
alternating, up to MAX_MEASUREMENTS each or the end of the budget. A quiet machine resolves in one
round; a noisy one gets the measurements its noise calls for.
"""

from __future__ import annotations

from dataclasses import replace

from autotune.decision.verdict import band
from autotune.search.choose import Candidate, choose, noise_cv, paired_noise
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace

BAND = 0.10  # measured within this share of the fastest: close enough that noise may decide
FASTEST = 2  # re-measured whatever they cost
MAX_CANDIDATES = 3
MEASUREMENTS = 2  # per candidate in the first round, the search's own measurement included
MAX_MEASUREMENTS = 6  # per candidate, however unresolved: the budget has other uses
# Held back from the search for the sequential rounds: two more rounds of the fastest and one tie.
TIE_BURSTS = 4
RECORD_BURSTS = 1  # the chosen configuration measured once more, for the recipe's rate


def reserved_bursts() -> int:
    """Re-measurements the search leaves time for: the first round, then the tie rounds."""
    return (MAX_CANDIDATES + 1) * (MEASUREMENTS - 1) + TIE_BURSTS + RECORD_BURSTS


def fewer_workers(config: LoaderConfig) -> LoaderConfig | None:
    if config.num_workers < 2:  # 1 -> 0 changes which knobs exist: the search covers w0 itself
        return None
    return replace(config, num_workers=config.num_workers - 1)


def to_confirm(
    candidates: list[Candidate], space: SearchSpace, always: list[LoaderConfig] | None = None
) -> list[LoaderConfig]:
    """The configurations to re-measure: the fastest two, then the cheapest near the fastest, and
    those of `always` that were measured (num_workers=0 where items come from memory)."""
    if not candidates:
        return []
    ranked = sorted(candidates, key=lambda c: -c.mean)
    top = ranked[:FASTEST]
    near = sorted(
        (c for c in ranked[FASTEST:] if c.mean >= (1 - BAND) * ranked[0].mean), key=Candidate.cost
    )
    chosen = [c.config for c in top + near[: MAX_CANDIDATES - len(top)]]
    cheapest = min((c for c in candidates if c.config in chosen), key=Candidate.cost)
    below = fewer_workers(cheapest.config)
    measured = {c.config for c in candidates}
    if below is not None and below not in measured and not space.problems(below):
        chosen.append(below)
    return chosen + [c for c in always or () if c in measured and c not in chosen]


def rounds(
    configs: list[LoaderConfig], measured: dict[LoaderConfig, int], measurements: int = MEASUREMENTS
) -> list[LoaderConfig]:
    """Round-robin order of the re-measurements until each has `measurements` of them."""
    order = []
    counts = {c: measured.get(c, 0) for c in configs}
    while any(n < measurements for n in counts.values()):
        for config in configs:
            if counts[config] < measurements:
                order.append(config)
                counts[config] += 1
    return order


def out_of_band(config: LoaderConfig, candidates: list[Candidate]) -> bool:
    """Measured already, and further below the fastest than BAND and than noise could explain:
    measuring it again cannot make it a contender."""
    mine = next((c for c in candidates if c.config == config), None)
    if mine is None:
        return False
    fastest = max(candidates, key=lambda c: c.mean)
    width = band(
        fastest.pieces, mine.pieces, noise_cv(candidates), paired_noise(fastest, candidates)
    )
    reach = max(BAND, width)
    return mine.mean < (1 - reach) * fastest.mean


def still_tied(candidates: list[Candidate]) -> list[LoaderConfig]:
    """The configurations to measure once more: the fastest and those tied with it on a band
    wider than the choice's target; none when the choice is sound."""
    choice = choose(candidates)
    return [] if choice is None else [c.config for c in choice.unresolved()]
