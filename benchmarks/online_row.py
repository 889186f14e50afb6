"""`autotune bench --online`'s rows: a round's figures from its trainings, a workload's from its
rounds (the worst of them)."""

from __future__ import annotations

from autotune.online.session import TunerState
from benchmarks.online_figures import StepTimes, Way, round_figures
from benchmarks.online_grid import Ideal
from benchmarks.online_model import OnlineRound, OnlineRow
from benchmarks.targets import online_targets
from benchmarks.workloads import BenchWorkload


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def online_round(
    order: tuple[Way, ...], times: dict[Way, StepTimes], tuner: TunerState
) -> OnlineRound:
    """`tuner`: (b)'s state after its last step; k is the step at which its exploring ended."""
    return tuner_round(
        order,
        times,
        tuner.exploration_ended_at,
        tuner.exploration_cost_s,
        tuner.stop_reason,
        None if tuner.chosen is None else tuner.chosen.label(),
        windows={k: [round(r, 1) for r in v] for k, v in tuner.windows.items()},
    )


def tuner_round(
    order: tuple[Way, ...],
    times: dict[Way, StepTimes],
    explored: int | None,
    tuner_cost_s: float,
    stop_reason: str | None,
    chosen: str | None,
    rank_choices: list[str | None] | None = None,
    windows: dict[str, list[float]] | None = None,
) -> OnlineRound:
    figures = round_figures(times, explored)
    return OnlineRound(
        order=list(order),
        seconds={w: round(t.span(0, t.steps), 3) for w, t in times.items()},
        exploration_steps=explored,
        exploration_cost_s=_round(figures.exploration_cost_s, 3),
        tuner_cost_s=round(tuner_cost_s, 3),
        stop_reason=stop_reason,
        chosen=chosen,
        whole=round(figures.whole, 4),
        after=_round(figures.after, 4),
        vs_defaults=_round(figures.vs_defaults, 4),
        rank_choices=rank_choices,
        windows=windows,
    )


def online_row(
    bw: BenchWorkload, ideal: Ideal, rounds: list[OnlineRound], steps: int | None = None
) -> OnlineRow:
    afters = [r.after for r in rounds if r.after is not None]
    whole = min(r.whole for r in rounds)
    after = min(afters) if afters else None
    return OnlineRow(
        key=bw.key,
        spec=bw.spec,
        what=bw.what,
        ideal=ideal.config.label(),
        ideal_params=ideal.config.as_dict(),
        ideal_source=ideal.source,
        rounds=rounds,
        whole=whole,
        after=after,
        vs_defaults=min((r.vs_defaults for r in rounds if r.vs_defaults is not None), default=None),
        targets=online_targets(whole, after),
        steps=steps,
    )
