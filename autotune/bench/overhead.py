"""What autotune's own measuring costs: one configuration run in a plain loop (the DataLoader, the
batches moved to the device, the step: no hooks) against the same configuration with autotune's
instrumentation on (the burst's phase clocks around wait, copy and compute, the host sampler, and
the GPU sampler where there is one), and with the optional NVTX ranges or torch.profiler.

Plain and instrumented run side by side on one loader, alternating in short segments in ABBA
order, so load from other processes on a shared machine falls on both alike; each pair of
neighbouring segments gives one ratio, and the median ratio is the figure. Before every segment
the prefetch buffer is drained, as a burst does before its window, so no segment starts with
batches the previous one left ready. Sampler and profiler start/stop happen outside the segments.

On a machine shared with other busy processes the throughput ratios scatter far more than 2%, so
the instrumentation's cost is also accounted directly, which load does not disturb: the CPU time
of the phase spans on the training thread per step, and the CPU time of the host sampler per
second, both measured here. Their sum, taken as if all of it delayed the step, bounds the cost.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

import torch
from torch.profiler import ProfilerActivity, profile

from autotune.burst.runner import drain_prefetched, endless_batches, release_loader
from autotune.profiling.nvtx import fetch_ranges, load_nvtx, nvtx_phases
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.telemetry.host import HostSampler
from autotune.telemetry.nvml import NvmlSampler
from autotune.telemetry.phases import PHASES, PhaseClock, stack_phases
from autotune.transfer.device_loader import DeviceLoader, PhaseHook
from autotune.transfer.move import batch_samples
from autotune.workload.base import Workload

AUTOTUNE, NVTX, PROFILER, CONTROL = "autotune", "autotune+nvtx", "torch.profiler", "plain (control)"
ALLOWED_OVERHEAD_PCT = 2.0  # the budget autotune's instrumentation must stay within
WARMUP_STEPS = 3

# An instrumented variant: given the feed, set up, yield the hook around compute (None: none), undo.
Variant = Callable[[DeviceLoader], ContextManager[PhaseHook | None]]


@dataclass
class Comparison:
    pairs: list[tuple[float, float]] = field(default_factory=list)  # (plain, variant) samples/s

    @property
    def ratios(self) -> list[float]:
        return [variant / plain for plain, variant in self.pairs]

    @property
    def overhead_pct(self) -> float:
        """How much slower the variant ran than plain: 100 x (1 - median pair ratio)."""
        return 100 * (1 - statistics.median(self.ratios))

    def quartiles(self) -> tuple[float, float]:
        """The middle half of the pair ratios: how much a single pair can be trusted."""
        if len(self.ratios) < 2:
            return self.ratios[0], self.ratios[0]
        q1, _, q3 = statistics.quantiles(self.ratios, n=4)
        return q1, q3

    def median_rates(self) -> tuple[float, float]:
        return (statistics.median(p for p, _ in self.pairs),
                statistics.median(v for _, v in self.pairs))


@dataclass(frozen=True)
class AccountedCost:
    span_us: float  # one phase span (enter + exit) on the training thread
    spans_per_step: int
    step_ms: float  # the plain loop's median step time
    sampler_cpu_ms_per_s: float  # host sampler thread CPU per second of measuring

    @property
    def bound_pct(self) -> float:
        """Upper bound: span time added to every step plus sampler CPU, all on the critical path."""
        spans = self.span_us * self.spans_per_step / (1000 * self.step_ms)
        return 100 * (spans + self.sampler_cpu_ms_per_s / 1000)


@dataclass
class OverheadResult:
    workload: str
    config: LoaderConfig
    device: str
    segment_s: float
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    accounted: AccountedCost | None = None
    notes: list[str] = field(default_factory=list)

    def overhead_pct(self, variant: str = AUTOTUNE) -> float:
        return self.comparisons[variant].overhead_pct

    @property
    def noise_pct(self) -> float:
        """How far the control's middle half of plain/plain ratios strays from 1, in percent."""
        q1, q3 = self.comparisons[CONTROL].quartiles()
        return 100 * max(1 - q1, q3 - 1)

    @property
    def within_budget(self) -> bool:
        """Side by side where the machine is quiet enough to resolve the budget, else accounted."""
        if self.noise_pct <= ALLOWED_OVERHEAD_PCT or self.accounted is None:
            return self.overhead_pct() <= ALLOWED_OVERHEAD_PCT
        return self.accounted.bound_pct <= ALLOWED_OVERHEAD_PCT

    def to_dict(self) -> dict[str, Any]:
        variants = {}
        for name, c in self.comparisons.items():
            plain, variant = c.median_rates()
            variants[name] = {"overhead_pct": round(c.overhead_pct, 2), "pairs": len(c.pairs),
                              "median_plain_samples_per_s": round(plain, 2),
                              "median_variant_samples_per_s": round(variant, 2),
                              "ratios": [round(r, 4) for r in c.ratios]}
        accounted = None
        if self.accounted is not None:
            a = self.accounted
            accounted = {"span_us": round(a.span_us, 3), "spans_per_step": a.spans_per_step,
                         "step_ms": round(a.step_ms, 3),
                         "sampler_cpu_ms_per_s": round(a.sampler_cpu_ms_per_s, 3),
                         "bound_pct": round(a.bound_pct, 3)}
        return {"workload": self.workload, "config": self.config.as_dict(), "device": self.device,
                "segment_s": self.segment_s, "variants": variants, "accounted": accounted,
                "allowed_overhead_pct": ALLOWED_OVERHEAD_PCT, "noise_pct": round(self.noise_pct, 2),
                "within_budget": self.within_budget, "notes": self.notes}


def _segment(workload: Workload, batches: Iterator[Any], device: torch.device, seconds: float,
             compute: PhaseHook | None) -> float:
    """Samples/s over one timed segment."""
    samples = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        batch = next(batches)
        if compute is None:
            workload.step(batch)
        else:
            with compute("compute"):
                workload.step(batch)
        samples += batch_samples(batch, workload.batch_size)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return samples / (time.perf_counter() - t0)


def compare(workload: Workload, config: LoaderConfig, device: torch.device, variant: Variant, *,
            pairs: int, segment_s: float) -> Comparison:
    """Plain against `variant` on one loader, in ABBA-ordered segments."""
    loader = workload.make_loader(config)
    feed = DeviceLoader(loader, device, **config.transfer_kwargs())  # no phase hook: plain
    batches = endless_batches(feed)
    out = Comparison()
    try:
        for _ in range(WARMUP_STEPS):
            workload.step(next(batches))
        for index in range(pairs):
            rates = {}
            for instrumented in ((False, True) if index % 2 == 0 else (True, False)):
                hooks = variant(feed) if instrumented else contextlib.nullcontext()
                with hooks as compute:
                    drain_prefetched(batches, config.prefetch_depth)
                    rates[instrumented] = _segment(workload, batches, device, segment_s, compute)
            out.pairs.append((rates[False], rates[True]))
    finally:
        batches.close()
        release_loader(loader)
    return out


def autotune_hooks(device: torch.device, marks: PhaseHook | None = None) -> Variant:
    """The instrumentation of a burst, switched on for the length of one segment."""
    cpus = usable_cpus().count

    @contextlib.contextmanager
    def hooks(feed: DeviceLoader) -> Iterator[PhaseHook]:
        clock = PhaseClock(device)
        phase = clock.span if marks is None else stack_phases(marks, clock.span)
        samplers = [HostSampler(cpus)]
        if device.type == "cuda":
            samplers += [s for s in [NvmlSampler.for_device(device.index or 0)] if s is not None]
        plain_phase = feed.phase
        feed.phase = phase
        for sampler in samplers:
            sampler.start()
        try:
            yield phase
        finally:
            feed.phase = plain_phase
            for sampler in samplers:
                sampler.stop()

    return hooks


def no_hooks(feed: DeviceLoader) -> ContextManager[None]:
    """The control: plain against plain shows how far the machine's noise alone moves a ratio."""
    return contextlib.nullcontext()


def profiler_on(device: torch.device) -> Variant:
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])

    @contextlib.contextmanager
    def hooks(feed: DeviceLoader) -> Iterator[None]:
        with profile(activities=activities):
            yield None

    return hooks


def span_cost_us(device: torch.device, spans: int = 20000) -> float:
    clock = PhaseClock(device)
    t0 = time.thread_time()
    for _ in range(spans):
        with clock.span("compute"):
            pass
    return 1e6 * (time.thread_time() - t0) / spans


class _TimedHostSampler(HostSampler):
    """The host sampler, counting the CPU time its own samples take (thread CPU clock)."""

    def __init__(self, usable: int):
        super().__init__(usable)
        self.cpu_s = 0.0

    def sample(self) -> None:
        t0 = time.thread_time()
        super().sample()
        self.cpu_s += time.thread_time() - t0


def sampler_cpu_ms_per_s(workload: Workload, config: LoaderConfig, seconds: float) -> float:
    """Host sampler CPU per second, sampling this process and a live pool of the config's workers."""
    loader = workload.make_loader(config)
    batches = endless_batches(DeviceLoader(loader, torch.device("cpu")))
    try:
        next(batches)  # the workers are up
        sampler = _TimedHostSampler(usable_cpus().count)
        sampler.start()
        # A burst takes the first and the last sample outside its window: count only those between.
        sampler.cpu_s = 0.0
        t0 = time.perf_counter()
        time.sleep(seconds)
        cpu_s, wall = sampler.cpu_s, time.perf_counter() - t0
        sampler.stop()
        return 1000 * cpu_s / wall
    finally:
        batches.close()
        release_loader(loader)


def measure_overhead(workload: Workload, config: LoaderConfig, device: torch.device, *,
                     pairs: int = 16, segment_s: float = 0.5,
                     on_variant: Callable[[str, Comparison], None] | None = None) -> OverheadResult:
    out = OverheadResult(str(workload.name), config, str(device), segment_s)
    variants: dict[str, Callable[[], Comparison]] = {
        CONTROL: lambda: compare(workload, config, device, no_hooks, pairs=pairs, segment_s=segment_s),
        AUTOTUNE: lambda: compare(workload, config, device, autotune_hooks(device),
                                  pairs=pairs, segment_s=segment_s),
        PROFILER: lambda: compare(workload, config, device, profiler_on(device),
                                  pairs=pairs, segment_s=segment_s),
    }
    nvtx = load_nvtx()
    if nvtx is not None:
        def with_nvtx() -> Comparison:
            with fetch_ranges(nvtx):  # in place when the workers fork: on in both arms
                return compare(workload, config, device, autotune_hooks(device, nvtx_phases(nvtx)),
                               pairs=pairs, segment_s=segment_s)
        variants[NVTX] = with_nvtx
        out.notes.append("autotune+nvtx: the per-step ranges (wait, copy, compute) were switched"
                         " per segment; the fetch/collate ranges inside forked workers were on in"
                         " both arms, so their cost is not in this figure. NVTX was measured with"
                         " no profiler attached; its cost while nsys records was not measured here")
    else:
        out.notes.append("NVTX not measured: this torch build cannot call NVTX")
    if device.type != "cuda":
        out.notes.append("CPU-only run: no GPU sampler, CUDA events or host->device copies were part"
                         " of the measured instrumentation")
    for name, run in variants.items():
        out.comparisons[name] = run()
        if on_variant is not None:
            on_variant(name, out.comparisons[name])
    plain_rate = out.comparisons[AUTOTUNE].median_rates()[0]
    out.accounted = AccountedCost(span_cost_us(device), len(PHASES),
                                  1000 * workload.batch_size / plain_rate,
                                  sampler_cpu_ms_per_s(workload, config, pairs * segment_s))
    return out


def render_markdown(result: OverheadResult, command: str) -> str:
    lines = ["# Overhead of autotune's measuring", "", f"Command: `{command}`", "",
             f"Workload `{result.workload}`, configuration `{result.config.label()}`, device"
             f" `{result.device}`. Plain loop and instrumented loop alternate on one loader in"
             f" {result.segment_s:g} s segments (ABBA order); each neighbouring pair gives a ratio."
             f" The control row runs plain against plain: its spread is the noise of this machine.",
             "", "| variant | pairs | median plain samples/s | median variant samples/s |"
             " overhead (median of pairs) | pair ratios, middle half |", "|---|---:|---:|---:|---:|---|"]
    for name, c in result.comparisons.items():
        plain, variant = c.median_rates()
        q1, q3 = c.quartiles()
        lines.append(f"| {name} | {len(c.pairs)} | {plain:.1f} | {variant:.1f} |"
                     f" {c.overhead_pct:+.2f}% | {q1:.3f} - {q3:.3f} |")
    budget = f"{ALLOWED_OVERHEAD_PCT:g}%"
    resolved = result.noise_pct <= ALLOWED_OVERHEAD_PCT
    lines += ["", f"autotune's instrumentation, side by side: **{result.overhead_pct():+.2f}%**"
                  " (positive is slower than the plain loop). The control's middle half strays up to"
                  f" {result.noise_pct:.1f}% from 1: " + (
                      f"quiet enough to resolve the {budget} budget." if resolved else
                      f"this machine's noise is larger than the {budget} budget, so the side-by-side"
                      " figure can neither confirm nor refute it; the accounted cost below decides."),
              ""]
    a = result.accounted
    if a is not None:
        lines += [f"Accounted directly (not disturbed by other load): {a.spans_per_step} phase spans"
                  f" x {a.span_us:.2f} us CPU on the training thread per {a.step_ms:.2f} ms step, plus"
                  f" {a.sampler_cpu_ms_per_s:.2f} ms of host-sampler CPU per second: at most"
                  f" **{a.bound_pct:.2f}%** even if all of it delayed the step.", ""]
    lines += [f"Within the {budget} budget: **{'yes' if result.within_budget else 'no'}**.", ""]
    lines += [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"


def write_report(result: OverheadResult, out_dir: Path, command: str) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"md": out_dir / "overhead.md", "json": out_dir / "overhead.json"}
    paths["md"].write_text(render_markdown(result, command))
    paths["json"].write_text(json.dumps({"command": command, **result.to_dict()}, indent=2) + "\n")
    return paths
