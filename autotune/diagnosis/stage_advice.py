"""Advice from the stage table: the stage that takes most of a worker's time, the loader ceiling
its CPU cost implies at the usable CPUs, the way around it, and any cheaper equivalent that was
measured on this machine (with its measured gain, never an assumed one)."""

from __future__ import annotations

from dataclasses import replace

from autotune.diagnosis.diagnose import Diagnosis
from autotune.diagnosis.fetch_advice import ms_text
from autotune.profiling.alternatives import NORMALIZE, TO_FLOAT, TO_UINT8, Alternative
from autotune.profiling.stage_run import StageProfile
from autotune.profiling.stage_table import StageRow, StageTable
from autotune.profiling.stages import StageKind

# Transforms by what moves them off the workers (class names, torchvision v1 and v2 alike).
TO_BATCH = TO_UINT8 | TO_FLOAT | NORMALIZE
GEOMETRY = {"RandomResizedCrop", "Resize", "RandomCrop", "CenterCrop", "RandomResize"}


def remedy(row: StageRow) -> str:
    """The way around a stage, by what it is."""
    if row.kind == StageKind.DECODE:
        return (
            "decode on the GPU (torchvision.io.decode_jpeg(device='cuda'), DALI), decode at a"
            " lower resolution (PIL's Image.draft for JPEGs) or pre-resize the images; or cache"
            " decoded samples"
        )
    if row.kind == StageKind.COLLATE:
        return (
            "fetch the batch at once with the dataset's __getitems__, or a simpler collate_fn"
            " (one torch.stack of same-size tensors)"
        )
    if row.kind == StageKind.FETCH:
        return (
            "this is the dataset's own __getitem__ work: cache what it computes, or fetch whole"
            " batches with __getitems__; for a per-stage split, keep the transforms in a"
            " `transform` attribute (a Compose)"
        )
    name = row.transform or row.name
    if name in TO_BATCH:
        return (
            f"move {name} onto the batch on the device: send uint8 tensors (PILToTensor or"
            " transforms.v2.ToImage) and convert and normalise the whole batch there"
        )
    if name in GEOMETRY:
        return (
            f"run {name} with torchvision.transforms.v2 on uint8 tensors (decoded by"
            " torchvision.io.decode_jpeg), decode at a lower resolution, or pre-resize the images"
        )
    return (
        f"run {name} on the GPU as a batch operation (transforms.v2 on batched tensors, DALI),"
        " or with transforms.v2 on uint8 tensors"
    )


def dominant_line(table: StageTable, cpus: int, bottleneck: str) -> str:
    top = table.dominant()
    bound = table.loader_bound(cpus)
    ceiling = (
        f": at {cpus} CPU{'s' if cpus != 1 else ''} the loader cannot exceed {bound:.0f}"
        f" samples/s ({ms_text(table.cpu_ms_per_item)} of CPU per item,"
        f" {ms_text(top.cpu_ms_per_item)} of it in {top.name})"
        if bound
        else ""
    )
    lead = (
        ""
        if bottleneck == "input"
        else (f"the loader does not limit this configuration now ({bottleneck}-bound); should it: ")
    )
    return (
        f"{lead}{top.name} takes {top.share_pct:.0f}% of a worker's time"
        f" ({ms_text(top.ms_per_item)} of {ms_text(table.ms_per_item)} per item){ceiling};"
        f" {remedy(top)}"
    )


def alternative_line(alt: Alternative, table: StageTable, cpus: int) -> str:
    saved = alt.before_ms_per_item - alt.after_ms_per_item
    now, then = table.loader_bound(cpus), table.loader_bound(cpus, saved)
    gain = (
        f"; the loader's CPU bound at {cpus} CPUs would go from {now:.0f} to {then:.0f} samples/s"
        if now and then and saved > 0
        else ""
    )
    return (
        f"measured here: {alt.name} ({' + '.join(alt.replaces)}) costs"
        f" {alt.after_ms_per_item:.3f} instead of {alt.before_ms_per_item:.3f} ms per item"
        f" ({alt.gain_text}, {alt.items} items){gain}"
    )


def stage_advice(
    table: StageTable, alternatives: list[Alternative], cpus: int, bottleneck: str
) -> list[str]:
    return [
        dominant_line(table, cpus, bottleneck),
        *(alternative_line(a, table, cpus) for a in alternatives),
    ]


def stage_record(profile: StageProfile, table: StageTable, cpus: int) -> dict:
    """The diagnosis block's `stages`: the table, the rate while timed and the alternatives."""
    return {
        **table.as_dict(cpus),
        "dominant": table.dominant().name,
        "samples_per_s_while_timed": round(profile.samples_per_s, 2),
        "profile_s": round(profile.duration_s, 2),
        "alternatives": [a.as_dict() for a in profile.alternatives],
    }


def with_stages(diagnosis: Diagnosis, profile: StageProfile, cpus: int) -> Diagnosis:
    """`diagnosis` with the stage table in its record and the advice drawn from it (unchanged
    where no item was timed)."""
    table = profile.table
    if table is None:
        return diagnosis
    return replace(
        diagnosis,
        stages=stage_record(profile, table, cpus),
        recommendations=[
            *diagnosis.recommendations,
            *stage_advice(table, profile.alternatives, cpus, diagnosis.bottleneck),
        ],
    )
