"""The overhead measurement written out: a Markdown page for people and a JSON file for tools,
both from one result, so the two never disagree.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import torch

from autotune import environment
from benchmarks.overhead_result import ALLOWED_OVERHEAD_PCT, STAGES, OverheadResult
from benchmarks.provenance import git_commit


def _provenance(result: OverheadResult, command: str) -> dict[str, object]:
    """What was run, when, on which commit and machine: a figure must say where it comes from."""
    return {
        "command": command,
        "created": datetime.now(timezone.utc).isoformat(),
        "commit": git_commit(),
        "environment": environment.collect(torch.device(result.device)),
    }


def render_markdown(
    result: OverheadResult, command: str, provenance: dict[str, object] | None = None
) -> str:
    p = provenance or {}
    env = p.get("environment") or {}
    where = (
        f" — {env.get('usable_cpus')} usable CPUs, device {env.get('device')}, torch"
        f" {env.get('torch')}; {p.get('created')}, commit {p.get('commit')}"
        if p
        else ""
    )
    lines = [
        "# Overhead of autotune's measuring",
        "",
        f"Command: `{command}`{where}",
        "",
        f"Workload `{result.workload}`, configuration `{result.config.label()}`, device"
        f" `{result.device}`. Plain loop and instrumented loop alternate on one loader in"
        f" {result.segment_s:g} s segments (ABBA order); each neighbouring pair gives a ratio."
        f" The control row runs plain against plain: its spread is the noise of this machine.",
        "",
        "| variant | pairs | median plain samples/s | median variant samples/s |"
        " overhead (median of pairs) | pair ratios, middle half |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, c in result.comparisons.items():
        plain, variant = c.median_rates()
        q1, q3 = c.quartiles()
        lines.append(
            f"| {name} | {len(c.pairs)} | {plain:.1f} | {variant:.1f} |"
            f" {c.overhead_pct:+.2f}% | {q1:.3f} - {q3:.3f} |"
        )
    budget = f"{ALLOWED_OVERHEAD_PCT:g}%"
    resolved = result.noise_pct <= ALLOWED_OVERHEAD_PCT
    lines += [
        "",
        f"autotune's instrumentation, side by side: **{result.overhead_pct():+.2f}%**"
        " (positive is slower than the plain loop). The control's middle half strays up to"
        f" {result.noise_pct:.1f}% from 1: "
        + (
            f"quiet enough to resolve the {budget} budget."
            if resolved
            else f"this machine's noise is larger than the {budget} budget, so the side-by-side"
            " figure can neither confirm nor refute it; the accounted cost below decides."
        ),
        "",
    ]
    a = result.accounted
    if a is not None:
        lines += [
            f"Accounted directly (not disturbed by other load): {a.spans_per_step} phase spans"
            f" x {a.span_us:.2f} us CPU on the training thread per {a.step_ms:.2f} ms step, plus"
            f" {a.sampler_cpu_ms_per_s:.2f} ms of host-sampler CPU per second: at most"
            f" **{a.bound_pct:.2f}%** even if all of it delayed the step.",
            "",
        ]
    lines += [f"Within the {budget} budget: **{'yes' if result.within_budget else 'no'}**.", ""]
    if STAGES in result.comparisons:
        lines += [
            "Per-stage timing inside the workers, side by side:"
            f" **{result.overhead_pct(STAGES):+.2f}%** of the rate."
        ]
        c = result.stage_cost
        if c is not None:
            lines += [
                f"Accounted directly: {c.stages_per_item:.2f} timed stage calls per item x"
                f" {c.timer_us:.2f} us of worker CPU each, over {c.item_cpu_ms:.3f} CPU ms per"
                f" item: at most **{c.bound_pct:.2f}%** of a worker's CPU (within the {budget}"
                f" budget: **{'yes' if c.within_budget else 'no'}**)."
            ]
        lines.append("")
    lines += [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"


def write_report(result: OverheadResult, out_dir: Path, command: str) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"md": out_dir / "overhead.md", "json": out_dir / "overhead.json"}
    provenance = _provenance(result, command)
    paths["md"].write_text(render_markdown(result, command, provenance))
    paths["json"].write_text(json.dumps({**provenance, **result.to_dict()}, indent=2) + "\n")
    return paths
