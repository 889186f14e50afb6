"""What an overhead measurement found, and the verdict on it: the paired throughputs per variant,
the directly accounted cost, and whether autotune's instrumentation stays within its budget. Apart
from the measuring so the verdict and its figures can be read, judged and written without running
anything.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from autotune.space.config import LoaderConfig

AUTOTUNE, NVTX, PROFILER, CONTROL = "autotune", "autotune+nvtx", "torch.profiler", "plain (control)"
STAGES = "stage timing"
ALLOWED_OVERHEAD_PCT = 2.0  # the budget autotune's instrumentation must stay within


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
        return (
            statistics.median(p for p, _ in self.pairs),
            statistics.median(v for _, v in self.pairs),
        )


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


@dataclass(frozen=True)
class StageCost:
    """The stage timing's cost accounted directly: the CPU a timed no-op stage adds over an
    untimed one, times the stages each item passes through, over a worker's CPU per item."""

    timer_us: float  # one stage's timing (clock pairs and the record), CPU on the worker
    stages_per_item: float  # stage calls per item (collate's share per item included)
    item_cpu_ms: float  # a worker's CPU per item, from the stage table

    @property
    def bound_pct(self) -> float:
        return 100 * self.timer_us * self.stages_per_item / (1000 * self.item_cpu_ms)

    @property
    def within_budget(self) -> bool:
        return self.bound_pct <= ALLOWED_OVERHEAD_PCT


@dataclass
class OverheadResult:
    workload: str
    config: LoaderConfig
    device: str
    segment_s: float
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    accounted: AccountedCost | None = None
    stage_cost: StageCost | None = None
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
            variants[name] = {
                "overhead_pct": round(c.overhead_pct, 2),
                "pairs": len(c.pairs),
                "median_plain_samples_per_s": round(plain, 2),
                "median_variant_samples_per_s": round(variant, 2),
                "ratios": [round(r, 4) for r in c.ratios],
            }
        accounted = None
        if self.accounted is not None:
            a = self.accounted
            accounted = {
                "span_us": round(a.span_us, 3),
                "spans_per_step": a.spans_per_step,
                "step_ms": round(a.step_ms, 3),
                "sampler_cpu_ms_per_s": round(a.sampler_cpu_ms_per_s, 3),
                "bound_pct": round(a.bound_pct, 3),
            }
        stage_cost = None
        if self.stage_cost is not None:
            c = self.stage_cost
            stage_cost = {
                "timer_us": round(c.timer_us, 3),
                "stages_per_item": round(c.stages_per_item, 3),
                "item_cpu_ms": round(c.item_cpu_ms, 4),
                "bound_pct": round(c.bound_pct, 3),
                "within_budget": c.within_budget,
            }
        return {
            "workload": self.workload,
            "config": self.config.as_dict(),
            "device": self.device,
            "segment_s": self.segment_s,
            "variants": variants,
            "accounted": accounted,
            "stage_cost": stage_cost,
            "allowed_overhead_pct": ALLOWED_OVERHEAD_PCT,
            "noise_pct": round(self.noise_pct, 2),
            "within_budget": self.within_budget,
            "notes": self.notes,
        }
