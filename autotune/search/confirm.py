"""Which configurations to re-measure before choosing, and in what order.

The fastest single measurement is partly luck, and so is which configuration comes second. The
two fastest and the cheapest measured near them are measured again, round-robin so that a slow
patch of the machine hits them all alike: one lucky burst cannot decide alone which
configurations compete. One worker fewer than the cheapest of them is added when never tried,
since the search samples worker counts coarsely and the cheapest equal configuration may sit just
below.
"""

from __future__ import annotations

from dataclasses import replace

from autotune.search.choose import Candidate, noise_cv
from autotune.space.config import LoaderConfig
from autotune.space.space import SearchSpace

BAND = 0.10  # measured within this share of the fastest: close enough that noise may decide
FASTEST = 2  # re-measured whatever they cost
MAX_CANDIDATES = 3
MEASUREMENTS = 2  # per candidate, the search's own measurement included
# Above this noise of one burst, two measurements each leave the difference of two means with a
# standard error past the 2% the choice may give up: a third round is taken, time allowing.
NOISY_CV = 0.03
NOISY_MEASUREMENTS = 3


def fewer_workers(config: LoaderConfig) -> LoaderConfig | None:
    if config.num_workers < 2:  # 1 -> 0 changes which knobs exist: the search covers w0 itself
        return None
    return replace(config, num_workers=config.num_workers - 1)


def to_confirm(candidates: list[Candidate], space: SearchSpace) -> list[LoaderConfig]:
    """The configurations to re-measure: the fastest two, then the cheapest near the fastest."""
    if not candidates:
        return []
    ranked = sorted(candidates, key=lambda c: -c.mean)
    top = ranked[:FASTEST]
    near = sorted((c for c in ranked[FASTEST:] if c.mean >= (1 - BAND) * ranked[0].mean),
                  key=Candidate.cost)
    chosen = [c.config for c in top + near[:MAX_CANDIDATES - len(top)]]
    cheapest = min((c for c in candidates if c.config in chosen), key=Candidate.cost)
    below = fewer_workers(cheapest.config)
    measured = {c.config for c in candidates}
    if below is not None and below not in measured and not space.problems(below):
        chosen.append(below)
    return chosen


def rounds(configs: list[LoaderConfig], measured: dict[LoaderConfig, int],
           measurements: int = MEASUREMENTS) -> list[LoaderConfig]:
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
    """Measured already, and further below the fastest than noise could explain: measuring it
    again cannot make it a contender."""
    mine = next((c for c in candidates if c.config == config), None)
    if mine is None:
        return False
    return mine.mean < (1 - BAND) * max(c.mean for c in candidates)


def too_noisy(candidates: list[Candidate]) -> bool:
    cv = noise_cv(candidates)  # pooled over those measured more than once
    return cv is not None and cv > NOISY_CV
