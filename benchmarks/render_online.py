"""The online bench report as Markdown: autotune.DataLoader against defaults and the grid's best,
trained alike (the table, how it was run, the targets and the notes)."""

from __future__ import annotations

from benchmarks.cells import mark, measured_lines, notes_lines, table
from benchmarks.online_model import OnlineReport, OnlineRound, OnlineRow
from benchmarks.targets import MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE


def online_targets(report: OnlineReport) -> str:
    met = report.targets_met()
    return (
        f"Targets, on the worst round: (b)/(c) whole run >= {MIN_ONLINE_WHOLE}"
        f"{mark(met.get('online_whole'))}; (b)/(c) after tuning >= {MIN_ONLINE_AFTER}"
        f"{mark(met.get('online_after'))}."
    )


ONLINE_HEADLINE = (
    "| workload | ideal (c) | (b) chose | exploration steps | exploration cost |"
    " (b)/(c) whole run | (b)/(c) after tuning | (b)/(a) |"
)


def ratios(worst: float | None, per_round: list[float | None], ok: bool | None) -> str:
    """The worst round's ratio, marked, then every round's where there are several."""
    text = "n/a" if worst is None else f"{worst:.3f}{mark(ok)}"
    if len(per_round) > 1 and any(r is not None for r in per_round):
        text += " (" + ", ".join("n/a" if r is None else f"{r:.3f}" for r in per_round) + ")"
    return text


def _per_round(values: list[str]) -> str:
    distinct = list(dict.fromkeys(values))
    return distinct[0] if len(distinct) == 1 else ", ".join(values)


def _chosen(r: OnlineRound) -> str:
    """(b)'s choice; under several ranks, whether they all ended on it."""
    chosen = r.chosen or "still exploring"
    if not r.rank_choices or len(r.rank_choices) < 2:
        return chosen
    if len(set(r.rank_choices)) == 1:
        running = r.rank_choices[0]  # persistence turned off acts at the next epoch, if any
        return (
            f"{chosen} (all {len(r.rank_choices)} ranks)"
            if running == chosen
            else f"{chosen} (all {len(r.rank_choices)} ranks running {running})"
        )
    return f"{chosen} (ranks: {', '.join(c or 'exploring' for c in r.rank_choices)})"


def online_row_line(row: OnlineRow) -> str:
    t = row.targets
    chosen = _per_round([_chosen(r) for r in row.rounds])
    steps = _per_round(
        [
            "all (not ended)"
            if r.exploration_steps is None
            else f"{r.exploration_steps} ({r.stop_reason})"
            if r.stop_reason
            else str(r.exploration_steps)
            for r in row.rounds
        ]
    )
    cost = _per_round(
        [
            "n/a" if r.exploration_cost_s is None else f"{r.exploration_cost_s:+.1f}s"
            for r in row.rounds
        ]
    )
    return (
        f"| {row.key} | {row.ideal} | {chosen} | {steps} | {cost} |"
        f" {ratios(row.whole, [r.whole for r in row.rounds], t.get('online_whole'))} |"
        f" {ratios(row.after, [r.after for r in row.rounds], t.get('online_after'))} |"
        f" {ratios(row.vs_defaults, [r.vs_defaults for r in row.rounds], None)} |"
    )


def online_table(report: OnlineReport) -> str:
    return table(
        ONLINE_HEADLINE,
        "|---|---|---|---:|---:|---:|---:|---:|",
        [online_row_line(r) for r in report.rows],
    )


# The online options that shape the exploration, as the report states them.
ONLINE_SHOWN = (
    "max_explore_share",
    "window_steps",
    "window_s",
    "warmup_steps",
    "min_windows",
    "max_windows",
    "max_workers",
    "cuda",
)


def _online_options(options: dict[str, object]) -> str:
    return ", ".join(f"{k} {options[k]}" for k in ONLINE_SHOWN if options.get(k) is not None)


def _ranks_method(report: OnlineReport) -> str:
    return (
        f"Each workload's training runs {report.steps} steps per rank as {report.ranks} DDP"
        f" ranks on this node, two ways, in {report.rounds} round(s): first (b)"
        " autotune.DataLoader in every rank, starting from PyTorch's defaults and tuning"
        f" online ({_online_options(report.online)}), the ranks exploring in lockstep; then"
        " (c) the best per-rank configuration run from step 0: the fastest, over steps 50-300"
        f" of a {report.ranks}-rank training each, of the single-process grid's best, the"
        " same with its workers divided among the ranks, each with and without persistent"
        " workers, and (b)'s choice (so that (c) is never a point (b) found faster). Each"
        " rank: the plain training loop of autotune.verify.steady over a DistributedSampler,"
        " the step followed by an all-reduce (gloo on the CPU) as DDP's; a way's time at a"
        " step is the slowest rank's. (a) is not run. *whole run*, *after tuning*,"
        " *exploration cost* and *exploration steps* as in the single-process bench (rank"
        " 0's exploration). *(b) chose*: rank 0's choice, and whether every rank ran it at"
        " the last step."
    )


def _short_runs(report: OnlineReport) -> list[str]:
    short = [r for r in report.rows if r.steps is not None]
    if not short:
        return []
    return [
        f"Short runs ({', '.join(f'{r.key}: {r.steps} steps' for r in short)}): each way runs"
        " that many steps in all, and (b) is told so (total_steps), as a script that knows"
        " its epochs tells it. Their (c) is the best hand-set configuration: the fastest of a"
        " sweep, each run over the same steps.",
        "",
    ]


def _start(start: str) -> str:
    """(a), the script's configuration."""
    if start == "w0":
        return "PyTorch's defaults (the script's own, w0)"
    return f"the script's own configuration, {start} (--start)"


def online_markdown(report: OnlineReport) -> str:
    sources = "; ".join(f"{r.key}: {r.ideal_source}" for r in report.rows)
    parts = [
        "# autotune bench --online",
        "",
        *measured_lines(report),
    ]
    if report.below_minimum:
        parts += [
            f"**{report.steps} steps per training: below the {report.min_steps} the"
            " issue asks for; a smoke run, not the benchmark.**",
            "",
        ]
    parts += [
        online_table(report),
        _ranks_method(report)
        if report.ranks > 1
        else f"Each workload's training runs {report.steps} steps three ways, in {report.rounds}"
        " round(s), the order alternating by round ((c), (b), (a), then (a), (b), (c)): (a)"
        f" {_start(report.start)}; (b) autotune.DataLoader starting from it, tuning online"
        f" ({_online_options(report.online)}); (c) the exhaustive grid's best from step 0, the"
        " ideal no tuner can beat. Each is the plain training loop of autotune.verify.steady"
        " (DeviceLoader with the"
        " ideal's transfer knobs in all three, the loop's code rather than the loader's; the"
        " loader re-iterated at each epoch end, which"
        " restarts non-persistent workers); the clock starts before the first iter(), so worker"
        " start-up counts. *whole run*: (c)'s wall time for all the steps over (b)'s, exploration"
        " included. *after tuning*: the same over steps [k, N), k being the steps (b) spent"
        " exploring, its switch to the chosen configuration included (n/a where it was still"
        " exploring at the last step). *exploration cost*: (b)'s time for steps [0, k) less"
        " (c)'s. *exploration steps*: k, and why the exploration ended. *(b)/(a)*: (a)'s wall"
        " time over (b)'s. Ratios: the worst round's, then each round's where there are"
        " several."
        + (
            ""
            if report.defaults
            else " (a) was not run here (--no-defaults): no target reads it, and (b)/(a) is n/a."
        ),
        "",
        f"Ideal (c) configurations from: {sources}.",
        "",
        *_short_runs(report),
        online_targets(report),
        "",
        *notes_lines(report),
    ]
    return "\n".join(parts) + "\n"
