"""The bench report as Markdown: the headline table, then each workload's tunings and side-by-side
figures; and the accuracy table (burst against steady rates). The online report is
render_online.py's."""

from __future__ import annotations

from benchmarks.cells import mark, measured_lines, notes_lines, pct, rate, signed_pct, table
from benchmarks.model import AccuracyReport, BenchReport, BenchRow
from benchmarks.targets import (
    MAX_BURST_VS_STEADY,
    MAX_COMPUTE_BOUND_WORKERS,
    MAX_RECORDED_VS_VERIFIED,
    MAX_STABILITY_DIFF,
    MAX_TUNE_SHARE_OF_GRID,
    MIN_TUNED_VS_GRID,
)

HEADLINE = (
    "| workload | tuned (worst) | grid best | tuned / grid best | tuning / grid time |"
    " recorded vs verified | x defaults | x heuristic | of ceiling | tunings differ |"
)


def headline_row(row: BenchRow) -> str:
    t = row.targets
    name = f"{row.key} (held out)" if row.held_out else row.key
    stability = (
        "n/a"
        if row.stability_diff is None
        else f"{100 * row.stability_diff:.1f}%{mark(t.get('stable'))}"
    )
    return (
        f"| {name} | {row.tuned} | {row.grid_best} |"
        f" {row.tuned_vs_grid:.3f}{mark(t.get('tuned_vs_grid'))} |"
        f" {row.tune_s:.0f}s{mark(t.get('within_budget'))} / {row.grid_s:.0f}s ="
        f" {pct(row.tune_share_of_grid)}{mark(t.get('tune_share_of_grid'))} |"
        f" {signed_pct(row.recorded_vs_verified)}{mark(t.get('recorded_vs_verified'))} |"
        f" {row.speedup_vs_defaults:.2f} | {row.speedup_vs_heuristic:.2f} |"
        f" {pct(row.ceiling_share)} | {stability} |"
    )


def bench_targets(report: BenchReport) -> str:
    """The targets, each marked met or missed on the worst tuning."""
    met = report.targets_met()
    return (
        "Targets, on the worst tuning: tuned / grid best >= "
        f"{MIN_TUNED_VS_GRID}{mark(met.get('tuned_vs_grid'))}; recorded vs verified within"
        f" ±{MAX_RECORDED_VS_VERIFIED:.0%}{mark(met.get('recorded_vs_verified'))}; tuning time"
        f" within the budget{mark(met.get('within_budget'))} and, where the grid is exhaustive,"
        f" <= {MAX_TUNE_SHARE_OF_GRID:.0%} of the grid's{mark(met.get('tune_share_of_grid'))};"
        f" compute-bound <= {MAX_COMPUTE_BOUND_WORKERS}"
        f" workers{mark(met.get('compute_bound_few_workers'))}; more workers than CPUs where the"
        f" grid found that faster{mark(met.get('beyond_cores_when_faster'))}; tunings"
        f" within {MAX_STABILITY_DIFF:.0%} of each other{mark(met.get('stable'))}."
    )


def headline(report: BenchReport) -> str:
    return table(
        HEADLINE,
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
        [headline_row(r) for r in report.rows],
    )


def _tunings(row: BenchRow) -> list[str]:
    lines = [
        "| seed | tuned | tuning | trials (pruned) + re-measured | noise | stopped on |"
        " side by side | / grid best | recorded (stated error) | verified (rounds) |"
        " recorded vs verified | worst in |",
        "|---:|---|---:|---|---:|---|---:|---:|---:|---|---:|---|",
    ]
    for t in row.tunings:
        noise = "n/a" if t.noise_pct is None else f"{t.noise_pct:.1f}%"
        stated = "" if t.recorded_error_pct is None else f" (±{t.recorded_error_pct:.1f}%)"
        rounds = ", ".join(f"{r:.0f}" for r in t.verified_rounds)
        verified = (
            "n/a"
            if t.verified_samples_per_s is None
            else f"{t.verified_samples_per_s:.1f} ({rounds})"
        )
        lines.append(
            f"| {t.seed} | {t.tuned} | {t.tune_s:.1f}s | {t.trials} ({t.pruned}) +"
            f" {t.remeasured} | {noise} | {t.stop} | {t.side_by_side_samples_per_s:.1f} |"
            f" {t.tuned_vs_grid:.3f} | {t.recorded_samples_per_s:.1f}{stated} | {verified} |"
            f" {signed_pct(t.recorded_vs_verified)} | {', '.join(t.worst_in) or '-'} |"
        )
    return lines


def _details(row: BenchRow) -> str:
    lines = [
        f"### {row.key}{' (held out)' if row.held_out else ''}: `{row.spec}`",
        "",
        f"{row.what}. Device ceiling {rate(row.device_ceiling_samples_per_s)}; loader alone"
        f" at the worst tuning's DataLoader arguments {rate(row.loader_ceiling_samples_per_s)}.",
        f"Grid: {row.grid_points} points, {row.grid_covers} ({row.grid_rejected} over the RAM"
        f" budget), in {row.grid_s:.0f}s.",
        "",
        *_tunings(row),
        "",
        "| configuration | roles | samples/s per round | mean | cv | peak PSS MiB |",
        "|---|---|---|---:|---:|---:|",
    ]
    for m in sorted(row.side_by_side, key=lambda m: -m.mean):
        rates = ", ".join(f"{r:.0f}" for r in m.samples_per_s)
        lines.append(
            f"| {m.label} | {', '.join(m.roles)} | {rates} | {m.mean:.1f} |"
            f" {100 * m.cv:.1f}% | {m.peak_pss_mib:.0f} |"
        )
    return "\n".join(lines) + "\n"


def to_markdown(report: BenchReport) -> str:
    v = report.verify
    parts = [
        f"# autotune bench{' (quick)' if report.quick else ''}",
        "",
        *measured_lines(report),
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
        " ceiling, loader alone at its own DataLoader arguments). *tunings differ*:"
        " (fastest - slowest) / fastest of the tunings' choices, side by side.",
        "",
        "Each grid point is one burst with the tuner's own trial settings"
        f" ({report.burst}); what each grid covers is given per workload below. Tuner budget"
        f" {report.tuner_budget_s:.0f}s.",
        "",
        bench_targets(report),
        "",
        *notes_lines(report),
        "## Per workload",
        "",
    ]
    parts += [_details(r) for r in report.rows]
    return "\n".join(parts)


ACCURACY_HEADLINE = (
    "| workload | configuration | burst samples/s | burst median | steady samples/s |"
    " steady median | burst / steady |"
)


def accuracy_table(report: AccuracyReport) -> str:
    lines = [ACCURACY_HEADLINE, "|---|---|---|---:|---|---:|---:|"]
    for r in report.rows:
        if r.error is not None:
            lines.append(f"| {r.workload} | {r.config} | failed: {r.error} | | | | ✗ |")
            continue
        ratio = "n/a" if r.ratio is None else f"{r.ratio:.3f}{mark(r.within)}"
        lines.append(
            f"| {r.workload} | {r.config} |"
            f" {', '.join(f'{x:.0f}' for x in r.burst_samples_per_s)} |"
            f" {r.burst_median:.1f} | {', '.join(f'{x:.0f}' for x in r.steady_samples_per_s)} |"
            f" {r.steady_median:.1f} | {ratio} |"
        )
    return "\n".join(lines) + "\n"


def _burst_settings(report: AccuracyReport) -> str:
    return (
        "the tuner's own trial settings"
        if report.as_trials
        else "**settings other than a trial's**"
    )


def _order(report: AccuracyReport) -> str:
    if report.order_alternates:
        return "the burst first in odd rounds and second in even ones"
    return "the burst first in every round"


def accuracy_markdown(report: AccuracyReport) -> str:
    within = report.within()
    parts = [
        f"# autotune bench --accuracy{' (quick)' if report.quick else ''}",
        "",
        *measured_lines(report),
        accuracy_table(report),
        "Does a burst measure the rate a configuration sustains? Per configuration,"
        f" {report.rounds} rounds, each one burst (autotune.burst.runner.run_burst with"
        f" {_burst_settings(report)}: {report.burst}) and one steady measurement (a plain training"
        f" loop, autotune.verify.steady: settle at least {report.settle_s:g} s and 3 x the batches"
        f" in flight, then a {report.steady_seconds:g} s window), {_order(report)}."
        " *burst / steady*: the median"
        f" burst over the median steady window. Target: within ±{MAX_BURST_VS_STEADY:.0%}"
        f"{mark(within)}.",
        "",
        *notes_lines(report),
    ]
    return "\n".join(parts) + "\n"
