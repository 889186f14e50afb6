"""Whether a remembered rate still holds: the check that a run started from the memory makes of
the remembered best on its first windows (online/memory.py, policy.py's HillClimb._checked).

A remembered rate and this run's are two processes' readings, minutes or days apart, so they differ
by more than one run's windows scatter: each run of a job settles at a level of its own (its
processes' placement, the page cache, what else the machine runs). The band is therefore the
wider of the windows' noise (Z standard errors of the difference, rate.tolerance) and
DRIFT_FLOOR, the spread of whole runs of one configuration measured on the project's machines;
only a change beyond both starts exploring again. A remembered best that was never measured
again after it was picked from rivals it tied with reads high by that pick (the winner's curse):
the check compares with its rate less that bias (`selection_bias`)."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

from autotune.decision.epoch_time import epoch_rate
from autotune.decision.rate import tolerance
from autotune.decision.verdict import Pieces, compare

# The least drift that starts exploring again, as a share of the remembered rate. On the 2-CPU
# development machine, runs of the 2-rank torchrun job at one fixed configuration (w4 pf4 persist)
# took 14.77 to 16.93 s, and the check of a remembered best read its first windows 15-20% off the
# remembered rate with nothing changed (results/bench/repeated-runs/notes.md); a false drift costs
# the run a whole new exploration. A slowed workload the memory must catch (items 4x slower) reads
# 60-80% off.
DRIFT_FLOOR = 0.25
# A drift read on the check's first window of steady steps, before its windows (whole epochs,
# where epochs are short) close, so that exploring can start again within the first epoch. A
# few steps' rate scatters more than a window's: only a slowdown twice the floor is taken from it.
EARLY_DRIFT = 2 * DRIFT_FLOOR


def band(noise_cv: float | None, remembered_n: int, check_n: int) -> float:
    """The largest relative difference between the check's rate and the remembered one that is
    still the same workload on the same machine."""
    return max(DRIFT_FLOOR, tolerance(noise_cv, remembered_n, check_n))


def selection_bias(noise_cv: float | None, best: Pieces, rivals: Sequence[Pieces]) -> float:
    """The share by which a best picked as the fastest of configurations that tie with it
    reads high: with k of them (itself included) of equal true rate, each mean's noise
    noise_cv / sqrt(n), the fastest reads high by the expected maximum of k standard normals
    (Blom's approximation, Phi^-1((k - 0.375) / (k + 0.25))) times its own mean's noise. A
    rival ties as the one brain's tie has it (verdict.compare: within its band). Rivals truly
    slower make the pick's bias smaller than this, so it bounds it. 0 where nothing tied or the
    noise is unknown."""
    if noise_cv is None or best.n < 1 or best.mean <= 0:
        return 0.0
    k = 1
    for rival in rivals:
        c = compare(best, rival, noise_cv)
        k += rival.n > 0 and c.slower_share >= 1 - c.band
    if k < 2:
        return 0.0
    return noise_cv / math.sqrt(best.n) * NormalDist().inv_cdf((k - 0.375) / (k + 0.25))


def drifted(rate: float, remembered: float, allowed: float) -> bool:
    """Beyond the band either way: a faster machine may want fewer workers as a slower one more."""
    return abs(rate / remembered - 1) > allowed


def slowed_early(rate: float, expected: float, allowed: float = EARLY_DRIFT) -> bool:
    """The first window's slowdown beyond `allowed`. Only a slowdown: a second run's first
    steps can read high (its files in the page cache the first run warmed), and a speed-up starves
    nothing while the full check, over its windows, decides it."""
    return rate < expected * (1 - allowed)


def first_epoch_rates(
    steady: float,
    epoch_steps: int | None,
    startup_s: float | None,
    remembered_startup_s: float | None,
) -> tuple[float, float] | None:
    """The first epoch's rate (epoch_time.epoch_rate) with this run's pool start-up, then with
    the remembered one, both over this run's steady steps: only the start-up differs.

    Where the pool's batches in flight fill the epoch (many workers, a deep prefetch, a short
    epoch), the epoch's steady steps hand out batches fetched during the start-up and read the
    loop's own step, however slow the items have become; the start-up, the first batch's fetch,
    shows it. The start-up stands for the epoch's data side, not the epoch measured whole: the
    run's first training steps (cudnn's autotuning, lazy initialisation) are no loader's cost.
    Judged at DRIFT_FLOOR, not EARLY_DRIFT: the two rates share their steady part, and one
    configuration's start-ups scatter less from run to run than a few steps' rate
    (results/bench/repeated-runs/notes.md). None where the epoch's length or either start-up is
    unknown."""
    if not epoch_steps or startup_s is None or remembered_startup_s is None:
        return None
    return (
        epoch_rate(steady, epoch_steps, startup_s),
        epoch_rate(steady, epoch_steps, remembered_startup_s),
    )
