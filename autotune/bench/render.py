"""The bench report as Markdown: the headline table, then each workload's side-by-side figures."""

from __future__ import annotations

from autotune.bench.model import BenchReport, BenchRow
from autotune.bench.targets import (MAX_COMPUTE_BOUND_WORKERS, MAX_STABILITY_DIFF,
                                    MAX_TUNE_SHARE_OF_GRID, MIN_TUNED_VS_GRID)

HEADLINE = ("| workload | tuned | grid best | tuned / grid best | tuning / grid time |"
            " x defaults | x heuristic | of ceiling | 2nd tuning differs |")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _rate(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0f} samples/s"


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


def headline_row(row: BenchRow) -> str:
    t = row.targets
    name = f"{row.key} (held out)" if row.held_out else row.key
    stability = ("n/a" if row.stability_diff is None
                 else f"{100 * row.stability_diff:.1f}%{_mark(t.get('stable'))}")
    return (f"| {name} | {row.tuned} | {row.grid_best} |"
            f" {row.tuned_vs_grid:.3f}{_mark(t.get('tuned_vs_grid'))} |"
            f" {row.tune_s:.0f}s / {row.grid_s:.0f}s = {_pct(row.tune_share_of_grid)}"
            f"{_mark(t.get('tune_share_of_grid'))} |"
            f" {row.speedup_vs_defaults:.2f} | {row.speedup_vs_heuristic:.2f} |"
            f" {_pct(row.ceiling_share)} | {stability} |")


def headline(report: BenchReport) -> str:
    lines = [HEADLINE, "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    lines += [headline_row(r) for r in report.rows]
    return "\n".join(lines) + "\n"


def _details(row: BenchRow) -> str:
    lines = [f"### {row.key}{' (held out)' if row.held_out else ''}: `{row.spec}`", "",
             f"{row.what}. Device ceiling {_rate(row.device_ceiling_samples_per_s)}; loader alone"
             f" at the tuned worker count {_rate(row.loader_ceiling_samples_per_s)}.",
             f"Tuner: {row.tuner_trials} trials ({row.tuner_pruned} pruned) +"
             f" {row.tuner_remeasured} re-measurements, noise"
             f" {'n/a' if row.tuner_noise_pct is None else f'{row.tuner_noise_pct:.1f}%'},"
             f" stopped on: {row.tuner_stop}. Grid: {row.grid_points} points, {row.grid_covers}"
             f" ({row.grid_rejected} over the RAM budget), in {row.grid_s:.0f}s.", "",
             "| configuration | roles | samples/s per round | mean | cv | peak PSS MiB |",
             "|---|---|---|---:|---:|---:|"]
    for m in sorted(row.side_by_side, key=lambda m: -m.mean):
        rates = ", ".join(f"{r:.0f}" for r in m.samples_per_s)
        lines.append(f"| {m.label} | {', '.join(m.roles)} | {rates} | {m.mean:.1f} |"
                     f" {100 * m.cv:.1f}% | {m.peak_pss_mib:.0f} |")
    return "\n".join(lines) + "\n"


def to_markdown(report: BenchReport) -> str:
    met = report.targets_met()
    env = report.environment
    parts = [
        f"# autotune bench{' (quick)' if report.quick else ''}", "",
        f"`{report.command}` — {report.total_s / 60:.1f} min on {env.get('usable_cpus')} usable"
        f" CPUs, device {env.get('device')}, torch {env.get('torch')}; {report.created:%Y-%m-%d %H:%M} UTC.",
        "",
        headline(report),
        "Columns: *tuned / grid best* and the speedups are means of the side-by-side run"
        f" ({report.rounds} alternating rounds, bursts of {report.side_by_side_burst}); *grid best*"
        " is the faster, re-measured, of the grid's two fastest points. *tuning / grid time* is"
        " the tuner's whole wall time (probes, search, re-measurements) over the grid's."
        " *of ceiling*: tuned throughput over min(device ceiling, loader alone at the tuned"
        " worker count). *2nd tuning differs*: a second tuning with another seed, its choice"
        " measured in the same side-by-side run.", "",
        "Each grid point is one burst with the tuner's own trial settings"
        f" ({report.burst}); what each grid covers is given per workload below. Tuner budget"
        f" {report.tuner_budget_s:.0f}s.", "",
        "Targets: tuned / grid best >= "
        f"{MIN_TUNED_VS_GRID} {_mark(met.get('tuned_vs_grid'))}; tuning time within the budget"
        f"{_mark(met.get('within_budget'))} and <= {MAX_TUNE_SHARE_OF_GRID:.0%} of the grid's"
        f"{_mark(met.get('tune_share_of_grid'))}; compute-bound <= {MAX_COMPUTE_BOUND_WORKERS}"
        f" workers{_mark(met.get('compute_bound_few_workers'))}; more workers than CPUs where the"
        f" grid found that faster{_mark(met.get('beyond_cores_when_faster'))}; two tunings"
        f" within {MAX_STABILITY_DIFF:.0%}{_mark(met.get('stable'))}.", "",
        "## Per workload", "",
    ]
    parts += [_details(r) for r in report.rows]
    return "\n".join(parts)
