"""The knob table, generated from the registry (`autotune/space/knobs.py`): what each knob sets,
where, what it needs and where it sits in the cheapest-within-noise order."""

from __future__ import annotations

from autotune.space.knobs import KNOBS, Kind


def _values(knob) -> str:
    if knob.kind is Kind.COUNT and not knob.values:
        return "the search space's worker range"
    shown = knob.choices if knob.kind is Kind.CHOICE else knob.values
    return ", ".join(f"`{v}`" for v in shown)


def knob_table() -> str:
    lines = [
        "| knob | applied by | label | tried | needs | cheaper first | torch | what it does |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k in KNOBS:
        rank = "" if k.cost_rank is None else str(k.cost_rank)
        extra = " (opt-in: `--knob`)" if k.opt_in else ""
        label = f"`{k.short}`" if k.short else "the value"
        lines.append(
            f"| `{k.name}`{extra} | {k.target} | {label} | {_values(k)} |"
            f" {', '.join(str(n) for n in k.needs)} | {rank} | {k.min_torch or ''} |"
            f" {k.doc.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"
