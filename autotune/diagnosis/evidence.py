"""The facts a verdict rests on, gathered from one burst and what is known about the machine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from autotune.burst.result import BurstResult
from autotune.diagnosis.split import StepSplit, device_busy_pct, split_step
from autotune.probe.fetch import FetchProbe

# At or above this busy share of the usable CPUs (this run's processes, or all processes on the
# machine) the loader has no core left to use.
CPU_SATURATED_PCT = 85.0


@dataclass(frozen=True)
class KnownCeilings:
    """Rates each side reaches alone (from `autotune bench`), or None where not measured."""

    device_samples_per_s: float | None = None  # the step on ready batches
    loader_samples_per_s: float | None = None  # the loader with no step

    @classmethod
    def from_measured(cls, measured: Mapping[str, Any]) -> KnownCeilings:
        return cls(
            measured.get("device_ceiling_samples_per_s"),
            measured.get("loader_ceiling_samples_per_s"),
        )


@dataclass(frozen=True)
class Context:
    usable_cpus: int
    max_workers: int | None = None
    ceilings: KnownCeilings = field(default_factory=KnownCeilings)
    target_rate: float | None = (
        None  # the simulated accelerator's rate: a device ceiling by construction
    )
    fetch: FetchProbe | None = None  # one batch fetched in the main process, per item and batched
    range_stop: str | None = None  # why the search's worker range stopped at max_workers

    @property
    def device_ceiling(self) -> float | None:
        return self.ceilings.device_samples_per_s or self.target_rate


@dataclass(frozen=True)
class Evidence:
    samples_per_s: float
    split: StepSplit
    num_workers: int
    usable_cpus: int
    host_cpu_pct: float  # this run's process tree, % of the usable CPUs
    system_cpu_pct: float | None  # every process on the usable CPUs
    gpu_util_pct: float | None
    device_busy_pct: float | None
    device_ceiling: float | None
    loader_ceiling: float | None
    target_rate: float | None

    @property
    def cpu_saturated(self) -> bool:
        return max(self.host_cpu_pct, self.system_cpu_pct or 0.0) >= CPU_SATURATED_PCT

    @property
    def of_device_ceiling_pct(self) -> float | None:
        return 100 * self.samples_per_s / self.device_ceiling if self.device_ceiling else None

    @property
    def of_loader_ceiling_pct(self) -> float | None:
        return 100 * self.samples_per_s / self.loader_ceiling if self.loader_ceiling else None

    def as_dict(self) -> dict[str, Any]:
        def r(value: float | None, digits: int = 1) -> float | None:
            return None if value is None else round(value, digits)

        return {
            "samples_per_s": r(self.samples_per_s, 2),
            "step_ms": r(self.split.step_ms, 3),
            "shares_pct": {k: r(v) for k, v in self.split.pcts().items()},
            "compute_basis": self.split.compute_basis,
            "num_workers": self.num_workers,
            "usable_cpus": self.usable_cpus,
            "host_cpu_pct": r(self.host_cpu_pct),
            "system_cpu_pct": r(self.system_cpu_pct),
            "cpu_saturated": self.cpu_saturated,
            "gpu_util_pct": r(self.gpu_util_pct),
            "device_busy_pct": r(self.device_busy_pct),
            "device_ceiling_samples_per_s": r(self.device_ceiling, 2),
            "loader_ceiling_samples_per_s": r(self.loader_ceiling, 2),
            "target_rate_samples_per_s": r(self.target_rate, 2),
            "of_device_ceiling_pct": r(self.of_device_ceiling_pct),
            "of_loader_ceiling_pct": r(self.of_loader_ceiling_pct),
        }


def gather(result: BurstResult, context: Context) -> Evidence:
    return Evidence(
        samples_per_s=result.samples_per_s,
        split=split_step(result),
        num_workers=result.config.num_workers,
        usable_cpus=context.usable_cpus,
        host_cpu_pct=result.host.cpu_pct,
        system_cpu_pct=result.host.system_cpu_pct,
        gpu_util_pct=result.gpu_util_pct,
        device_busy_pct=device_busy_pct(result)[0],
        device_ceiling=context.device_ceiling,
        loader_ceiling=context.ceilings.loader_samples_per_s,
        target_rate=context.target_rate,
    )
