"""Plain-language recommendations that follow from a verdict and what the trials measured."""

from __future__ import annotations

from typing import Sequence

from autotune.decision.thresholds import WAITS_SHARE
from autotune.diagnosis.effects import (
    WorkersAt,
    describe_effect,
    fewest_workers_within,
    knob_effect,
    workers_at,
    workers_measured_faster,
)
from autotune.diagnosis.evidence import Context, Evidence
from autotune.diagnosis.fetch_advice import explains_main_process, fetch_advice
from autotune.diagnosis.measured import MeasuredConfig
from autotune.diagnosis.verdict import Verdict

# Worker counts whose best rates are within this fraction do the same job: fewer is cheaper.
SAME_RATE = 0.03
# Waiting below this share of the step is the hand-over of a ready batch: nothing to gain there.
NEGLIGIBLE_WAIT_PCT = 100 * WAITS_SHARE


def _at_ceiling(e: Evidence) -> str:
    if e.of_device_ceiling_pct is None:
        return ""
    what = "the target rate" if e.target_rate else "the device ceiling"
    return f" at {e.of_device_ceiling_pct:.0f}% of {what}"


def _cpu_use(e: Evidence) -> str:
    """'CPU 97% of the usable CPUs', naming other processes when they hold most of it."""
    own = f"CPU {e.host_cpu_pct:.0f}% of {e.usable_cpus} usable CPUs"
    if e.system_cpu_pct is not None and e.system_cpu_pct - e.host_cpu_pct >= 10:
        return (
            f"{own}; all processes together {e.system_cpu_pct:.0f}%: other processes on this"
            " machine hold the rest"
        )
    return own


def _scaling(trials: Sequence[MeasuredConfig], workers: int) -> str:
    """'2 workers 480/s, 4 workers 490/s' around the tuned worker count (each its fastest
    configuration's mean); where restarts matter, every rate at one persistence setting, named,
    and a rate measured under the other marked as the epoch model's (effects.workers_at)."""
    at = workers_at(trials)
    near = sorted(at.by_workers, key=lambda w: abs(w - workers))[:3]
    listed = ", ".join(_at_workers(at, w) for w in sorted(near))
    return listed if at.setting is None else f"at persistent_workers={at.setting}, {listed}"


def _at_workers(at: WorkersAt, workers: int) -> str:
    one = at.by_workers[workers]
    line = f"{workers} workers {one.rate:.0f}/s"
    if not at.predicted(workers):
        return line
    other = "with" if one.config.persistent_workers else "without"
    return (
        f"{line} (predicted from its steady rate and restart; measured {one.measured:.0f}/s"
        f" {other} persistent workers)"
    )


def _input(e: Evidence, trials: Sequence[MeasuredConfig], context: Context) -> list[str]:
    w, cpus = e.num_workers, e.usable_cpus
    if w == 0:
        if workers_measured_faster(trials, SAME_RATE) is False:
            # The fetch advice that follows says why, with the scaling measured.
            measured = "" if explains_main_process(context.fetch) else f" ({_scaling(trials, 0)})"
            return [
                f"the step waits {e.split.wait_pct:.0f}% of the time for data loaded in the"
                " training process (num_workers=0), yet no worker count measured faster"
                f"{measured}: make fetching cheaper, not parallel"
            ]
        return [
            "data loads in the training process itself (num_workers=0): use worker processes"
            f" (measured: {_scaling(trials, 0)})"
        ]
    if e.cpu_saturated:
        return [
            f"with {w} workers on {cpus} usable CPUs the loader is CPU-saturated"
            f" ({_cpu_use(e)}){_at_ceiling(e)}: more workers will not"
            " help; cache decoded samples, lower the decode resolution, or move decode/augment"
            " to the GPU (DALI, torchvision.io.decode_jpeg on device)"
        ]
    capped = context.max_workers is not None and w >= context.max_workers
    more = (
        f"the search's worker range stopped at {w} workers: {context.range_stop}"
        if capped and context.range_stop
        else "the search stopped at its worker cap: raise --max-workers"
        if capped
        else "more workers or a larger prefetch_factor may still help"
    )
    return [
        f"the loader waits rather than computes ({_cpu_use(e)}, {w} workers){_at_ceiling(e)}:"
        f" items likely wait on storage or locks; {more}"
        f" (measured: {_scaling(trials, w)}); read from local disk or a cache"
    ]


def _device(e: Evidence, trials: Sequence[MeasuredConfig], context: Context) -> list[str]:
    input_gain = (
        "a faster input pipeline will not raise throughput"
        if e.split.wait_pct < NEGLIGIBLE_WAIT_PCT
        else f"a faster input pipeline could gain at most that {e.split.wait_pct:.0f}%"
    )
    out = [
        f"the device is busy {e.split.compute_pct:.0f}% of the step while data waits"
        f" {e.split.wait_pct:.0f}%: {input_gain}; to go faster make the step cheaper (mixed"
        " precision, torch.compile, channels_last for convolutions) or use a faster device"
    ]
    fewest = fewest_workers_within(trials, e.samples_per_s, SAME_RATE)
    if fewest is not None and fewest < e.num_workers:
        out.append(
            f"{fewest} workers measured within {SAME_RATE:.0%} of this rate: fewer workers"
            f" free CPUs and memory at no cost in throughput"
        )
    return out


def _transfer(e: Evidence, trials: Sequence[MeasuredConfig], context: Context) -> list[str]:
    # Pinned memory is not assumed to help (pin + non_blocking can be slower): cite the trials.
    measured = "; ".join(
        describe_effect(knob_effect(trials, k), k)
        for k in ("pin_memory", "non_blocking", "side_stream_prefetch")
    )
    return [
        f"host->device copies take {e.split.copy_pct or 0:.0f}% of the step: send fewer bytes"
        " (uint8 images, normalised on the device: 4x less than float32; smaller crops)",
        f"measured: {measured}",
    ]


def _host(e: Evidence, trials: Sequence[MeasuredConfig], context: Context) -> list[str]:
    return [
        f"the host spends {e.split.other_pct:.0f}% of the step outside data wait and device work"
        " (Python, kernel launches, per-step syncs): a larger batch spreads that cost over more"
        " samples; CUDA graphs or torch.compile(mode='reduce-overhead') cut launch overhead;"
        " avoid per-step .item()/.cpu() syncs"
    ]


RULES = {"input": _input, "device": _device, "transfer": _transfer, "host": _host}


def recommend(verdict: Verdict, trials: Sequence[MeasuredConfig], context: Context) -> list[str]:
    e = verdict.evidence
    faster = workers_measured_faster(trials, SAME_RATE)
    return [
        *RULES[verdict.bottleneck](e, trials, context),
        *fetch_advice(context.fetch, e.num_workers, faster, _scaling(trials, e.num_workers)),
    ]
