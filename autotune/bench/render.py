"""The bench report as Markdown: the headline table, then each workload's tunings and side-by-side
figures; the accuracy table (burst against steady rates); and the online table (autotune.DataLoader
against defaults and the grid's best, trained alike)."""

from __future__ import annotations

from autotune.bench.model import AccuracyReport, BenchReport, BenchRow
from autotune.bench.online_model import OnlineReport, OnlineRound, OnlineRow
from autotune.bench.targets import (MAX_BURST_VS_STEADY, MAX_COMPUTE_BOUND_WORKERS,
                                    MAX_RECORDED_VS_VERIFIED, MAX_STABILITY_DIFF,
                                    MAX_TUNE_SHARE_OF_GRID, MIN_ONLINE_AFTER, MIN_ONLINE_WHOLE,
                                    MIN_TUNED_VS_GRID)

HEADLINE = ("| workload | tuned (worst) | grid best | tuned / grid best | tuning / grid time |"
            " recorded vs verified | x defaults | x heuristic | of ceiling | tunings differ |")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _signed_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}%"


def _rate(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0f} samples/s"


def _measured(report: BenchReport | AccuracyReport | OnlineReport) -> list[str]:
    """What was run, how long, where, when and on which commit; and, for a past record, why."""
    env = report.environment
    commit = f", commit {report.commit}" if report.commit else ""
    lines = [f"`{report.command}` — {report.total_s / 60:.1f} min on {env.get('usable_cpus')} usable"
             f" CPUs, device {env.get('device')}, torch {env.get('torch')};"
             f" {report.created:%Y-%m-%d %H:%M} UTC{commit}.", ""]
    return lines + ([f"> **Historical record.** {report.historical}", ""] if report.historical else [])


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


def headline_row(row: BenchRow) -> str:
    t = row.targets
    name = f"{row.key} (held out)" if row.held_out else row.key
    stability = ("n/a" if row.stability_diff is None
                 else f"{100 * row.stability_diff:.1f}%{_mark(t.get('stable'))}")
    return (f"| {name} | {row.tuned} | {row.grid_best} |"
            f" {row.tuned_vs_grid:.3f}{_mark(t.get('tuned_vs_grid'))} |"
            f" {row.tune_s:.0f}s{_mark(t.get('within_budget'))} / {row.grid_s:.0f}s ="
            f" {_pct(row.tune_share_of_grid)}{_mark(t.get('tune_share_of_grid'))} |"
            f" {_signed_pct(row.recorded_vs_verified)}{_mark(t.get('recorded_vs_verified'))} |"
            f" {row.speedup_vs_defaults:.2f} | {row.speedup_vs_heuristic:.2f} |"
            f" {_pct(row.ceiling_share)} | {stability} |")


def _table(header: str, align: str, rows: list[str]) -> str:
    return "\n".join([header, align, *rows]) + "\n"


def bench_targets(report: BenchReport) -> str:
    """The targets, each marked met or missed on the worst tuning."""
    met = report.targets_met()
    return ("Targets, on the worst tuning: tuned / grid best >= "
            f"{MIN_TUNED_VS_GRID}{_mark(met.get('tuned_vs_grid'))}; recorded vs verified within"
            f" ±{MAX_RECORDED_VS_VERIFIED:.0%}{_mark(met.get('recorded_vs_verified'))}; tuning time"
            f" within the budget{_mark(met.get('within_budget'))} and, where the grid is exhaustive,"
            f" <= {MAX_TUNE_SHARE_OF_GRID:.0%} of the grid's{_mark(met.get('tune_share_of_grid'))};"
            f" compute-bound <= {MAX_COMPUTE_BOUND_WORKERS}"
            f" workers{_mark(met.get('compute_bound_few_workers'))}; more workers than CPUs where the"
            f" grid found that faster{_mark(met.get('beyond_cores_when_faster'))}; tunings"
            f" within {MAX_STABILITY_DIFF:.0%} of each other{_mark(met.get('stable'))}.")


def online_targets(report: OnlineReport) -> str:
    met = report.targets_met()
    return (f"Targets, on the worst round: (b)/(c) whole run >= {MIN_ONLINE_WHOLE}"
            f"{_mark(met.get('online_whole'))}; (b)/(c) after tuning >= {MIN_ONLINE_AFTER}"
            f"{_mark(met.get('online_after'))}.")


def headline(report: BenchReport) -> str:
    return _table(HEADLINE, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
                  [headline_row(r) for r in report.rows])


def _tunings(row: BenchRow) -> list[str]:
    lines = ["| seed | tuned | tuning | trials (pruned) + re-measured | noise | stopped on |"
             " side by side | / grid best | recorded | verified (rounds) | recorded vs verified |"
             " worst in |",
             "|---:|---|---:|---|---:|---|---:|---:|---:|---|---:|---|"]
    for t in row.tunings:
        noise = "n/a" if t.noise_pct is None else f"{t.noise_pct:.1f}%"
        verified = ("n/a" if t.verified_samples_per_s is None else
                    f"{t.verified_samples_per_s:.1f} ({', '.join(f'{r:.0f}' for r in t.verified_rounds)})")
        lines.append(f"| {t.seed} | {t.tuned} | {t.tune_s:.1f}s | {t.trials} ({t.pruned}) +"
                     f" {t.remeasured} | {noise} | {t.stop} | {t.side_by_side_samples_per_s:.1f} |"
                     f" {t.tuned_vs_grid:.3f} | {t.recorded_samples_per_s:.1f} | {verified} |"
                     f" {_signed_pct(t.recorded_vs_verified)} | {', '.join(t.worst_in) or '-'} |")
    return lines


def _details(row: BenchRow) -> str:
    lines = [f"### {row.key}{' (held out)' if row.held_out else ''}: `{row.spec}`", "",
             f"{row.what}. Device ceiling {_rate(row.device_ceiling_samples_per_s)}; loader alone"
             f" at the worst tuning's worker count {_rate(row.loader_ceiling_samples_per_s)}.",
             f"Grid: {row.grid_points} points, {row.grid_covers} ({row.grid_rejected} over the RAM"
             f" budget), in {row.grid_s:.0f}s.", "",
             *_tunings(row), "",
             "| configuration | roles | samples/s per round | mean | cv | peak PSS MiB |",
             "|---|---|---|---:|---:|---:|"]
    for m in sorted(row.side_by_side, key=lambda m: -m.mean):
        rates = ", ".join(f"{r:.0f}" for r in m.samples_per_s)
        lines.append(f"| {m.label} | {', '.join(m.roles)} | {rates} | {m.mean:.1f} |"
                     f" {100 * m.cv:.1f}% | {m.peak_pss_mib:.0f} |")
    return "\n".join(lines) + "\n"


def notes_lines(report: BenchReport | OnlineReport) -> list[str]:
    """The misses, explained after the run (the results file's `notes`)."""
    if not report.notes:
        return []
    return ["The misses, explained after the run:", "", *(f"- {n}" for n in report.notes), ""]


def to_markdown(report: BenchReport) -> str:
    v = report.verify
    parts = [
        f"# autotune bench{' (quick)' if report.quick else ''}", "",
        *_measured(report),
        headline(report),
        f"Columns: every workload is tuned {report.tunings} times (seeds 0 to"
        f" {report.tunings - 1}) and each column shows the WORST of those tunings on its measure"
        " (the tunings table below each workload shows all of them and which is worst where)."
        " *tuned (worst)*: the tuning with the lowest *tuned / grid best*, which, like the"
        " speedups, is a mean of the side-by-side run"
        f" ({report.rounds} alternating rounds, bursts of {report.side_by_side_burst}); *grid best*"
        " is the faster, re-measured, of the grid's two fastest points. *tuning / grid time*: the"
        " longest tuning's whole wall time (probes, search, re-measurements), within the budget"
        " or not, over the grid's. *recorded vs verified*: (recorded - verified) / verified for the"
        " tuning farthest off, where recorded is the samples/s its recipe states and verified the"
        " median of a steady measurement of that configuration in a plain training loop, not the"
        " burst runner, taken right after that tuning, before the shared machine drifts"
        f" ({v.get('rounds')} windows of {v.get('seconds'):g} s after a"
        f" settle of at least {v.get('settle_s'):g} s and 3 x the batches in flight:"
        " autotune.verify.steady). *of ceiling*: the worst tuning's throughput over min(device"
        " ceiling, loader alone at its worker count). *tunings differ*: (fastest - slowest) /"
        " fastest of the tunings' choices, side by side.", "",
        "Each grid point is one burst with the tuner's own trial settings"
        f" ({report.burst}); what each grid covers is given per workload below. Tuner budget"
        f" {report.tuner_budget_s:.0f}s.", "",
        bench_targets(report), "",
        *notes_lines(report),
        "## Per workload", "",
    ]
    parts += [_details(r) for r in report.rows]
    return "\n".join(parts)


ACCURACY_HEADLINE = ("| workload | configuration | burst samples/s | burst median | steady samples/s |"
                     " steady median | burst / steady |")


def accuracy_table(report: AccuracyReport) -> str:
    lines = [ACCURACY_HEADLINE, "|---|---|---|---:|---|---:|---:|"]
    for r in report.rows:
        if r.error is not None:
            lines.append(f"| {r.workload} | {r.config} | failed: {r.error} | | | | ✗ |")
            continue
        ratio = "n/a" if r.ratio is None else f"{r.ratio:.3f}{_mark(r.within)}"
        lines.append(f"| {r.workload} | {r.config} |"
                     f" {', '.join(f'{x:.0f}' for x in r.burst_samples_per_s)} |"
                     f" {r.burst_median:.1f} | {', '.join(f'{x:.0f}' for x in r.steady_samples_per_s)} |"
                     f" {r.steady_median:.1f} | {ratio} |")
    return "\n".join(lines) + "\n"


def accuracy_markdown(report: AccuracyReport) -> str:
    within = report.within()
    parts = [
        f"# autotune bench --accuracy{' (quick)' if report.quick else ''}", "",
        *_measured(report),
        accuracy_table(report),
        "Does a burst measure the rate a configuration sustains? Per configuration,"
        f" {report.rounds} rounds, each one burst (autotune.burst.runner.run_burst with the tuner's"
        f" own trial settings: {report.burst}) followed by one steady measurement (a plain training"
        f" loop, autotune.verify.steady: settle at least {report.settle_s:g} s and 3 x the batches"
        f" in flight, then a {report.steady_seconds:g} s window). *burst / steady*: the median"
        f" burst over the median steady window. Target: within ±{MAX_BURST_VS_STEADY:.0%}"
        f"{_mark(within)}.",
    ]
    return "\n".join(parts) + "\n"


ONLINE_HEADLINE = ("| workload | ideal (c) | (b) chose | exploration steps | exploration cost |"
                   " (b)/(c) whole run | (b)/(c) after tuning | (b)/(a) |")


def _ratios(worst: float | None, per_round: list[float | None], ok: bool | None) -> str:
    """The worst round's ratio, marked, then every round's where there are several."""
    text = "n/a" if worst is None else f"{worst:.3f}{_mark(ok)}"
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
        return (f"{chosen} (all {len(r.rank_choices)} ranks)" if running == chosen else
                f"{chosen} (all {len(r.rank_choices)} ranks running {running})")
    return f"{chosen} (ranks: {', '.join(c or 'exploring' for c in r.rank_choices)})"


def online_row_line(row: OnlineRow) -> str:
    t = row.targets
    chosen = _per_round([_chosen(r) for r in row.rounds])
    steps = _per_round(["all (not ended)" if r.exploration_steps is None
                        else f"{r.exploration_steps} ({r.stop_reason})" if r.stop_reason
                        else str(r.exploration_steps) for r in row.rounds])
    cost = _per_round(["n/a" if r.exploration_cost_s is None else f"{r.exploration_cost_s:+.1f}s"
                       for r in row.rounds])
    return (f"| {row.key} | {row.ideal} | {chosen} | {steps} | {cost} |"
            f" {_ratios(row.whole, [r.whole for r in row.rounds], t.get('online_whole'))} |"
            f" {_ratios(row.after, [r.after for r in row.rounds], t.get('online_after'))} |"
            f" {_ratios(row.vs_defaults, [r.vs_defaults for r in row.rounds], None)} |")


def online_table(report: OnlineReport) -> str:
    return _table(ONLINE_HEADLINE, "|---|---|---|---:|---:|---:|---:|---:|",
                  [online_row_line(r) for r in report.rows])


# The online options that shape the exploration, as the report states them.
ONLINE_SHOWN = ("max_explore_share", "window_steps", "window_s", "warmup_steps", "min_windows",
                "max_windows", "max_workers", "cuda")


def _online_options(options: dict[str, object]) -> str:
    return ", ".join(f"{k} {options[k]}" for k in ONLINE_SHOWN if options.get(k) is not None)


def _ranks_method(report: OnlineReport) -> str:
    return (f"Each workload's training runs {report.steps} steps per rank as {report.ranks} DDP"
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
            " the last step.")


def _short_runs(report: OnlineReport) -> list[str]:
    short = [r for r in report.rows if r.steps is not None]
    if not short:
        return []
    return [f"Short runs ({', '.join(f'{r.key}: {r.steps} steps' for r in short)}): each way runs"
            " that many steps in all, and (b) is told so (total_steps), as a script that knows"
            " its epochs tells it. Their (c) is the best hand-set configuration: the fastest of a"
            " sweep, each run over the same steps.", ""]


def online_markdown(report: OnlineReport) -> str:
    sources = "; ".join(f"{r.key}: {r.ideal_source}" for r in report.rows)
    parts = [
        "# autotune bench --online", "",
        *_measured(report),
    ]
    if report.below_minimum:
        parts += [f"**{report.steps} steps per training: below the {report.min_steps} the"
                  " issue asks for; a smoke run, not the benchmark.**", ""]
    parts += [online_table(report), _ranks_method(report) if report.ranks > 1 else
        f"Each workload's training runs {report.steps} steps three ways, in {report.rounds}"
        " round(s), the order alternating by round ((c), (b), (a), then (a), (b), (c)): (a)"
        " PyTorch's defaults; (b) autotune.DataLoader starting from them, tuning online"
        f" ({_online_options(report.online)}); (c) the exhaustive grid's best from step 0, the ideal no tuner can"
        " beat. Each is the plain training loop of autotune.verify.steady (DeviceLoader with the"
        " ideal's transfer knobs in all three, the loop's code rather than the loader's; the"
        " loader re-iterated at each epoch end, which"
        " restarts non-persistent workers); the clock starts before the first iter(), so worker"
        " start-up counts. *whole run*: (c)'s wall time for all the steps over (b)'s, exploration"
        " included. *after tuning*: the same over steps [k, N), k being the steps (b) spent"
        " exploring, its switch to the chosen configuration included (n/a where it was still"
        " exploring at the last step). *exploration cost*: (b)'s time for steps [0, k) less"
        " (c)'s. *exploration steps*: k, and why the exploration ended. *(b)/(a)*: (a)'s wall"
        " time over (b)'s. Ratios: the worst round's, then each round's where there are"
        " several." + ("" if report.defaults else " (a) was not run here (--no-defaults): no"
                       " target reads it, and (b)/(a) is n/a."), "",
        f"Ideal (c) configurations from: {sources}.", "",
        *_short_runs(report),
        online_targets(report), "",
        *notes_lines(report),
    ]
    return "\n".join(parts) + "\n"
