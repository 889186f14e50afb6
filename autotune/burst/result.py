"""What one burst measured."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from autotune.burst.epoch import restart_cost_s
from autotune.decision.epoch_time import EpochParts
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import HostStats
from autotune.telemetry.nvml import GpuStats


@dataclass(frozen=True)
class BurstResult:
    config: LoaderConfig
    samples_per_s: float
    steps: int
    samples: int
    window_s: float  # the timed, steady window
    startup_s: float  # iter() to first batch: worker start-up
    warmup_s: float  # first batch to the start of the window
    duration_s: float  # the whole burst, teardown included
    steady: bool  # the two halves of the window agreed within tolerance
    wait_s: float  # host blocked waiting for the loader
    copy_s: float  # host time in host->device copy (and layout conversion)
    compute_s: float  # host time in step()
    device_copy_s: float | None  # CUDA-event time of the copies; None without a GPU
    device_compute_s: float | None  # CUDA-event time of the steps; None without a GPU
    host: HostStats
    gpu: GpuStats | None
    # Busy time of an emulated accelerator (simulated workloads, --target-rate) in the window;
    # None for a real device, whose busy share comes from NVML instead.
    device_busy_s: float | None = None
    # Finished batches waiting in the loader at the window's start and end (backlog.py); the rate
    # counts their change. None where the loader's state cannot be read.
    backlog_start: int | None = None
    backlog_end: int | None = None
    # Epoch accounting (epoch.py): `samples_per_s` is the rate over whole epochs of this
    # workload; the window's own rate, with any boundary it crossed taken out, is the steady one.
    steady_samples_per_s: float | None = None  # None: recorded before epochs were counted
    first_batch_s: float | None = None  # iter() to an epoch's first batch (fresh pool or refill)
    restart_cost_s: float = 0.0  # what one epoch boundary costs over a steady step
    epoch_samples: int | None = None  # None: the loader has no length
    window_epochs: int = 0  # epoch boundaries the timed window crossed
    # The part of wait_s spent on batches not yet made (window.py: PullWaits); None: recorded
    # before it was kept, or the backlog unread (all of the wait).
    unready_s: float | None = None

    @property
    def steady_rate(self) -> float:
        return (
            self.samples_per_s if self.steady_samples_per_s is None else self.steady_samples_per_s
        )

    @property
    def epoch_s(self) -> float | None:
        """An epoch's time at the measured rate; None where the length is unknown."""
        if not self.epoch_samples or self.samples_per_s <= 0:
            return None
        return self.epoch_samples / self.samples_per_s

    @property
    def restart_share(self) -> float:
        """Share of an epoch's time its restart costs (0 where the length is unknown)."""
        epoch_s = self.epoch_s
        return 0.0 if epoch_s is None else self.restart_cost_s / epoch_s

    @property
    def epoch_parts(self) -> EpochParts:
        """Its parts for the epoch model (decision/epoch_time.py). Every burst starts a fresh
        pool, so a persistent one measures a fresh start-up too (its burst's start-up over a
        steady step) besides its refill; a fresh one measures no refill."""
        persistent = self.config.persistent_workers and self.config.num_workers > 0
        batch = max(1, round(self.samples / max(1, self.steps)))
        fresh = (
            restart_cost_s(self.startup_s, self.steady_rate, batch)
            if persistent
            else self.restart_cost_s
        )
        return EpochParts(
            steady=self.steady_rate,
            fresh_restart_s=fresh if self.config.num_workers > 0 else 0.0,
            refill_s=self.restart_cost_s if persistent else None,
            epoch_size=self.epoch_samples,
            persistent=persistent,
        )

    @property
    def step_s(self) -> float:
        return self.window_s / max(1, self.steps)

    @property
    def unready_share(self) -> float:
        """The share of the window the loop waited for batches not yet made: its wait with the
        hand-overs of ready batches left out (window.py: PullWaits)."""
        unready = self.wait_s if self.unready_s is None else self.unready_s
        return unready / max(self.window_s, 1e-12)

    def shares(self) -> dict[str, float]:
        """Percent of the window's wall time: wait + copy + compute + other = 100."""
        total = max(self.window_s, 1e-12)
        wait, copy, compute = (100 * x / total for x in (self.wait_s, self.copy_s, self.compute_s))
        return {
            "wait": wait,
            "copy": copy,
            "compute": compute,
            "other": max(0.0, 100.0 - wait - copy - compute),
        }

    @property
    def transfers(self) -> bool:
        """A host->device copy happened: CUDA events exist only when the batches went to a GPU."""
        return self.device_copy_s is not None

    @property
    def gpu_util_pct(self) -> float | None:
        return self.gpu.util_mean_pct if self.gpu else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, as stored with each trial in the study."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BurstResult:
        data = dict(data)
        data["config"] = LoaderConfig(**data["config"])
        data["host"] = HostStats(**data["host"])
        data["gpu"] = GpuStats(**data["gpu"]) if data.get("gpu") else None
        return cls(**data)
