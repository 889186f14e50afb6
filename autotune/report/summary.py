"""report.md: one page that ties the verdict, the evidence, the pictures and the tables together."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.diagnosis.diagnose import Diagnosis
from autotune.diagnosis.fetch_advice import ms_text
from autotune.recipe.model import FetchRecord, RateSource, shown, speedup_text
from autotune.report.table import NA

if TYPE_CHECKING:
    from autotune.search.result import TuneResult

TOP_TRIALS = 5
# (label, key in the evidence record, unit suffix)
EVIDENCE_ROWS = (
    ("samples/s", "samples_per_s", ""),
    ("step time", "step_ms", " ms"),
    ("waiting for data", "wait", "%"),
    ("host->device copy", "copy", "%"),
    ("device compute", "compute", "%"),
    ("other (host work)", "other", "%"),
    ("CPU, this run", "host_cpu_pct", "%"),
    ("CPU, all processes", "system_cpu_pct", "%"),
    ("GPU utilization", "gpu_util_pct", "%"),
    ("device busy", "device_busy_pct", "%"),
    ("of the device ceiling or target rate", "of_device_ceiling_pct", "%"),
)


def _bursts(n: int | None) -> str:
    return "one burst" if not n or n == 1 else f"the mean of {n} bursts"


def _value(record: dict[str, Any], key: str, unit: str) -> str:
    value = record["shares_pct"].get(key) if key in record["shares_pct"] else record.get(key)
    return NA if value is None else f"{value:g}{unit}"


def evidence_table(columns: list[tuple[str, Diagnosis]]) -> str:
    records = [(name, d.to_record()["evidence"]) for name, d in columns]
    lines = [
        "| | " + " | ".join(name for name, _ in records) + " |",
        "|---|" + "---:|" * len(records),
    ]
    for label, key, unit in EVIDENCE_ROWS:
        lines.append(f"| {label} | " + " | ".join(_value(r, key, unit) for _, r in records) + " |")
    return "\n".join(lines)


def _verdict_line(name: str, diagnosis: Diagnosis | None) -> str:
    if diagnosis is None:
        return f"- {name}: no verdict (the trial failed)"
    return f"- {name}: **{diagnosis.bottleneck}-bound**: {diagnosis.reason}."


def _top_trials(result: TuneResult) -> str:
    ranked = sorted((t for t in result.trials if t.ok), key=lambda t: t.rate, reverse=True)
    lines = ["| # | config | samples/s | bottleneck |", "|---:|---|---:|---|"]
    for t in ranked[:TOP_TRIALS]:
        verdict = t.diagnosis.bottleneck if t.diagnosis else NA
        lines.append(f"| {t.number} | `{t.config.label()}` | {t.rate:.1f} | {verdict} |")
    return "\n".join(lines)


def stage_section(result: TuneResult, rel: dict[str, str]) -> list[str]:
    """Where a worker's time goes: the stage table of the tuned configuration, and its picture."""
    profile, best = result.stages, result.best
    record = best.diagnosis.stages if best and best.diagnosis else None
    if profile is None or profile.table is None or record is None or best is None:
        why = (
            "no item was timed"
            if profile is not None
            else "not timed (`stages=False`, or the budget or a stop signal ended the tuning first)"
        )
        return ["## Where the loader's time goes", "", f"Pipeline stages: {why}.", ""]
    t = profile.table
    cpus = record["usable_cpus"]
    lines = [
        "## Where the loader's time goes",
        "",
        f"One {profile.duration_s:.1f} s burst of `{best.config.label()}` with each stage"
        f" timed inside the workers ({t.items} items in {t.processes} process"
        f"{'es' if t.processes != 1 else ''}; {profile.samples_per_s:.1f} samples/s while timed)."
        f" Recognised: `{t.structure}`. Shares are of a worker's busy time and add up to 100%.",
        "",
        "| stage | ms/item | share of worker time | CPU ms/item | on CPU | items/s per CPU |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in t.rows:
        on_cpu = NA if r.cpu_pct is None else f"{r.cpu_pct:.0f}%"
        rate = NA if r.items_per_s_per_cpu is None else f"{r.items_per_s_per_cpu:.0f}"
        lines.append(
            f"| `{r.name}` | {r.ms_per_item:.3f} | {r.share_pct:.1f}% |"
            f" {r.cpu_ms_per_item:.3f} | {on_cpu} | {rate} |"
        )
    bound = record["loader_bound_samples_per_s"]
    total_cpu = NA if t.cpu_pct is None else f"{t.cpu_pct:.0f}%"
    lines += [
        f"| **all** | {t.ms_per_item:.3f} | 100% | {t.cpu_ms_per_item:.3f} | {total_cpu} |"
        f" {NA if bound is None else f'{bound / cpus:.0f}'} |",
        "",
        f"The stages take {total_cpu} of a worker's time on a CPU; at {cpus:g} usable CPUs their"
        f" CPU cost allows the loader at most"
        f" {NA if bound is None else f'{bound:.0f}'} samples/s.",
        "",
    ]
    for alt in profile.alternatives:
        lines += [
            f"Measured alternative: {alt.name}: {alt.before_ms_per_item:.3f} ->"
            f" {alt.after_ms_per_item:.3f} ms per item ({alt.gain_text}). {alt.detail}.",
            "",
        ]
    lines += [f"![Where a worker's time goes, per stage]({rel['stages']})", ""]
    return lines


def fetch_section(fetch: FetchRecord | None) -> list[str]:
    """One batch fetched in the training process before the search, per item and batched, and
    what receiving a batch from a worker costs it."""
    if fetch is None:
        return []

    def text(ms: float | None) -> str:
        return NA if ms is None else ms_text(ms)

    rows = [
        ("per item (`__getitem__`, then the collate_fn)", fetch.per_item_ms_per_item),
        (f"batched ({fetch.batched_way or 'no batched way'})", fetch.batched_ms_per_item),
    ]
    lines = [
        "## How items are fetched",
        "",
        f"One batch of {fetch.items} items fetched in the training process before the search,"
        " each way on the same items (the batched way's batch must equal the per-item one):",
        "",
        "| way | per item |",
        "|---|---:|",
        *(f"| {way} | {text(ms)} |" for way, ms in rows),
        "",
        f"A batch costs the training process {text(fetch.fetch_ms_per_batch)} to fetch itself;"
        f" receiving one from a worker costs it {text(fetch.receive_ms_per_batch)} (measured at"
        f" 1 worker). Items {'come' if fetch.in_memory else 'do not come'} from memory"
        " (microseconds each, on a CPU)"
        + (
            "; num_workers=0 was measured and re-measured before the choice."
            if fetch.in_memory or fetch.workers_cannot_pay
            else "."
        ),
        "",
    ]
    return lines


def _deeper_look(result: TuneResult, run_dir: Path) -> list[str]:
    out = []
    if result.trace is not None:
        tr = result.trace
        out.append(
            f"- torch.profiler trace of the tuned configuration: [{tr.path.name}]"
            f"({tr.path.relative_to(run_dir).as_posix()}) ({tr.active_steps} active steps)."
            " Open the file in ui.perfetto.dev, or the folder with `tensorboard --logdir`"
            " or HTA's `TraceAnalysis(trace_dir=...)`. Measured cost: median step"
            f" {tr.traced_step_ms:.2f} ms profiled against {tr.plain_step_ms:.2f} ms"
            f" unprofiled before and after ({tr.overhead_pct:+.1f}%"
            f"{', i.e. within the noise of this machine' if tr.overhead_pct < 0 else ''}),"
            f" plus {1000 * tr.export_s:.0f} ms writing the file; `autotune overhead` measures"
            " it side by side."
        )
    else:
        out.append("- no torch.profiler trace (add `--trace`)")
    if result.nvtx is not None and result.best is not None:
        n = result.nvtx
        step_ms = result.best.burst.step_s * 1000
        main_pct = 100 * n.step_ranges * n.range_us / 1000 / step_ms
        out.append(
            f"- NVTX ranges were emitted during tuning (wait, copy, compute per step; fetch and"
            f" collate per batch in the workers) for `nsys profile`. One range cost"
            f" {n.range_us:.2f} us here with no profiler attached: {n.step_ranges} per step is"
            f" {main_pct:.1g}% of the tuned {step_ms:.1f} ms step. Their cost while nsys"
            " records was not measured here."
        )
    else:
        out.append("- no NVTX ranges (add `--nvtx` and run under `nsys profile`)")
    return out


def render(result: TuneResult, run_dir: Path, plots: dict[str, Path]) -> str:
    recipe, best, baseline = result.recipe, result.best, result.baseline
    if recipe is None or best is None or baseline is None or best.diagnosis is None:
        raise ValueError(
            "the report is of a tuning with a recipe, its judged best trial and the defaults' trial"
        )
    m, env = recipe.measured, recipe.environment
    rel = {k: p.relative_to(run_dir).as_posix() for k, p in plots.items()}
    lines = [
        f"# autotune report: {result.workload.name}",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')} · device `{result.device}` · {env['usable_cpus']}"
        f" usable CPUs · {len(result.trials)} trials in {result.elapsed_s:.0f} s",
        "",
        "## Result",
        "",
        f"PyTorch defaults **{shown(m.baseline_samples_per_s, '.1f')} samples/s** -> tuned"
        f" **{shown(m.samples_per_s, '.1f')} samples/s** ({speedup_text(m.speedup)}) with"
        f" `{best.config.label()}`."
        " Recipe: [recipe.json](recipe.json).",
    ]
    if m.target_rate_samples_per_s and m.samples_per_s is not None:
        share = 100 * m.samples_per_s / m.target_rate_samples_per_s
        lines += [
            "",
            f"What-if: the step was replaced by a simulated accelerator consuming"
            f" {m.target_rate_samples_per_s:g} samples/s. This node's CPUs feed it"
            f" {m.samples_per_s:.1f} samples/s, {share:.0f}% of that rate, with"
            f" `{best.config.label()}`.",
        ]
    lines += [
        "",
        "## Why: the verdict",
        "",
        _verdict_line("tuned", best.diagnosis),
        _verdict_line("PyTorch defaults", baseline.diagnosis),
        "",
    ]
    columns = [
        (n, t.diagnosis) for n, t in (("defaults", baseline), ("tuned", best)) if t.diagnosis
    ]
    lines += [evidence_table(columns), ""]
    if m.rate_from == RateSource.RECORD:
        lines += [
            f"The headline rate is {_bursts(m.measurements)} of `{best.config.label()}`"
            " measured after the choice: the bursts that chose it were selected for being"
            " high, this was not. The tuned column (and the split picture) is the burst the"
            f" choice was made on closest to their mean ({best.samples_per_s:.1f} samples/s).",
            "",
        ]
    elif m.measurements and m.measurements > 1:
        lines += [
            f"The tuned column (and the split picture) is one burst of `{best.config.label()}`:"
            f" of its {m.measurements} measurements, the one closest to their mean"
            f" ({best.samples_per_s:.1f} against {m.samples_per_s:.1f} samples/s, the"
            " headline figure; no time was left to measure it again after the choice).",
            "",
        ]
    tie = m.tie_note(best.config.label())
    if tie is not None:
        lines += [tie, ""]
    lines += [
        f"{note}\n" for note in (m.error_note(), m.epoch_note(), m.range_note()) if note is not None
    ]
    if m.not_searched:
        left = "; ".join(f"`{name}` ({why})" for name, why in m.not_searched.items())
        lines += [f"Left at PyTorch's defaults, not searched: {left}.", ""]
    lines += ["What to do:", ""]
    lines += [f"- {text}" for text in best.diagnosis.recommendations]
    lines += [
        "",
        "## Pictures",
        "",
        f"![Where the step time goes: defaults against tuned]({rel['split']})",
        "",
        f"![Throughput against num_workers per prefetch_factor]({rel['workers']})",
        "",
        f"![Best throughput so far over tuning time]({rel['progress']})",
        "",
        *stage_section(result, rel),
        *fetch_section(m.fetch),
        "## Trials",
        "",
        f"Best {TOP_TRIALS} by throughput; every trial with its step-time split and verdict:"
        " [trials.md](trials.md), [trials.csv](trials.csv).",
        "",
        _top_trials(result),
        "",
        "## Deeper look",
        "",
        *_deeper_look(result, run_dir),
        "",
        "## Reading the numbers",
        "",
        "Shares are of the step's wall time and add up to 100%. Device compute is the"
        " device's busy time where it is known; here it is measured as"
        f" {best.diagnosis.verdict.evidence.split.compute_basis}. `other` is host work"
        " outside waiting, copying and device compute."
        f" `{NA}` means this machine cannot measure the figure (no GPU: no copy to a device,"
        " no GPU utilization); it is never shown as 0.",
        "",
    ]
    return "\n".join(lines)
