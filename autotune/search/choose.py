"""Which measured configuration becomes the recipe: the cheapest within noise of the best.

Every configuration's measurements are pooled into a Candidate. The noise is estimated from the
configurations measured more than once, and only those compete: one lucky burst must not win.
Among them, those whose mean throughput is within noise of the fastest mean are equivalent, and
the cheapest wins: fewest workers, then smallest prefetch, then least RAM, then no pinning.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from autotune.search.trial import REJECTED, Trial
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig

# Differences below FLOOR are never worth more workers; above CAP they are never called noise,
# however noisy the machine: the choice gives up at most this much throughput for a cheaper pick.
TOLERANCE_FLOOR = 0.01
TOLERANCE_CAP = 0.02
Z = 2.0  # standard errors of a difference that still count as "within noise"


def pick_best(trials: list[Trial]) -> Trial | None:
    measured = [t for t in trials if t.ok]
    return max(measured, key=lambda t: t.samples_per_s) if measured else None


def find_baseline(trials: list[Trial]) -> Trial | None:
    """The trial of PyTorch's defaults (in a shared study, not necessarily this process's first)."""
    return next((t for t in trials if t.config == PYTORCH_DEFAULTS), trials[0] if trials else None)


@dataclass(frozen=True)
class Candidate:
    config: LoaderConfig
    trials: tuple[Trial, ...]  # its usable measurements

    @property
    def rates(self) -> list[float]:
        return [t.samples_per_s for t in self.trials]

    @property
    def n(self) -> int:
        return len(self.trials)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.rates)

    @property
    def peak_pss_mib(self) -> float:
        return max(t.result.host.peak_pss_mib for t in self.trials)

    def cost(self) -> tuple[int, int, int, bool]:
        """Lexicographic: workers, prefetch, RAM (whole MiB: finer is measurement jitter), pinning."""
        c = self.config
        return c.num_workers, c.effective_prefetch_factor, round(self.peak_pss_mib), c.pin_memory

    def representative(self) -> Trial:
        """The measurement closest to the mean: the one whose details (shares, memory) are shown."""
        return min(self.trials, key=lambda t: abs(t.samples_per_s - self.mean))


def group(trials: list[Trial]) -> list[Candidate]:
    """Usable measurements pooled per configuration; a configuration rejected once is out."""
    rejected = {t.config for t in trials if t.status == REJECTED}
    by_config: dict[LoaderConfig, list[Trial]] = {}
    for t in trials:
        if t.ok and t.config not in rejected:
            by_config.setdefault(t.config, []).append(t)
    return [Candidate(config, tuple(ts)) for config, ts in by_config.items()]


def noise_cv(candidates: list[Candidate]) -> float | None:
    """Pooled relative standard deviation of one burst; None until something was measured twice."""
    num = dof = 0.0
    for c in candidates:
        if c.n >= 2 and c.mean > 0:
            num += (c.n - 1) * (statistics.stdev(c.rates) / c.mean) ** 2
            dof += c.n - 1
    return math.sqrt(num / dof) if dof else None


def tolerance(cv: float | None, n_a: int, n_b: int) -> float:
    """How far below the best mean a mean may be and still count as equal."""
    if cv is None:
        return TOLERANCE_FLOOR
    margin = Z * cv * math.sqrt(1 / max(1, n_a) + 1 / max(1, n_b))
    return min(TOLERANCE_CAP, max(TOLERANCE_FLOOR, margin))


@dataclass(frozen=True)
class Choice:
    chosen: Candidate
    fastest: Candidate  # highest mean throughput
    equivalent: tuple[Candidate, ...]  # within noise of the fastest, cheapest first
    noise_cv: float | None


def choose(candidates: list[Candidate]) -> Choice | None:
    remeasured = [c for c in candidates if c.n >= 2]
    pool = remeasured or candidates
    if not pool:
        return None
    cv = noise_cv(pool)
    fastest = max(pool, key=lambda c: c.mean)
    within = tuple(sorted((c for c in pool if c.mean >= fastest.mean * (1 - tolerance(cv, fastest.n, c.n))),
                          key=Candidate.cost))
    return Choice(within[0], fastest, within, cv)
