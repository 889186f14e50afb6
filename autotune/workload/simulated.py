"""Simulated workloads whose optimum can be computed.

Items cost a fixed amount of *CPU time* (a busy loop on the thread's CPU clock, so contention
shows as it would for real decoding) and/or *storage latency* (a sleep: the worker waits without
using a core). The step sleeps, which frees the CPU exactly like an asynchronous GPU kernel; an
optional `host_ms` of main-thread CPU before it stands for per-step Python and launch overhead.

Every parameter, in one place (SimSpec, `sim:key=value,...`):
  cpu_ms, io_ms     CPU time and storage latency of one item;
  step_ms, host_ms  the step's emulated device time and its main-thread CPU before it;
  batch, shape      batch size and item shape;
  length            items per epoch (the dataset's length): an epoch is length / batch steps;
  open_ms           storage latency paid once per process on its first item, as opening a
                    dataset's files is: a non-persistent pool pays it again every epoch;
  straggle_every,   one item in `straggle_every` waits `straggle_x` times its io_ms (a slow read);
  straggle_x        0 (the default) turns stragglers off;
  collate_ms        CPU time of the collate_fn per batch, on top of stacking the items;
  numpy             1: items are float32 numpy arrays, which the collate turns into tensors.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate

from autotune.errors import WorkloadError
from autotune.key_values import key_values
from autotune.workload.accelerator import EmulatedAccelerator
from autotune.workload.base import Workload

T = TypeVar("T")


def parse_params(cls: type[T], text: str | None, what: str) -> T:
    """A spec dataclass from 'key=value,...' (any subset of its fields); each value is read as its
    default's type ('3x32x32' for a shape tuple, 0/1 for a flag)."""
    values: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key, raw in key_values(text, fields, f"bad {what} parameter", WorkloadError).items():
        default: Any = fields[key].default
        try:
            if isinstance(default, tuple):
                values[key] = tuple(int(x) for x in raw.split("x"))
            elif isinstance(default, bool):
                values[key] = {"0": False, "1": True}[raw.strip()]
            else:
                values[key] = type(default)(raw)
        except (ValueError, KeyError):
            raise WorkloadError(f"bad value for {what} parameter {key}: {raw!r}") from None
    return cls(**values)


def burn_cpu(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class SimulatedDataset(Dataset):
    def __init__(
        self,
        length: int,
        item_cpu_ms: float,
        item_io_ms: float,
        item_shape: tuple[int, ...],
        num_classes: int = 10,
        *,
        open_ms: float = 0.0,
        straggle_every: int = 0,
        straggle_x: float = 1.0,
        numpy: bool = False,
    ):
        self.length = length
        self.item_cpu_s = item_cpu_ms / 1000
        self.item_io_s = item_io_ms / 1000
        self.item_shape = item_shape
        self.num_classes = num_classes
        self.open_s = open_ms / 1000
        self.straggle_every = straggle_every
        self.straggle_x = straggle_x
        self.numpy = numpy
        self._opened_in: int | None = None  # the process that paid open_s (forked workers have not)

    def _open(self) -> None:
        if self.open_s and self._opened_in != os.getpid():
            time.sleep(self.open_s)
            self._opened_in = os.getpid()

    def io_seconds(self, index: int) -> float:
        straggles = self.straggle_every and index % self.straggle_every == self.straggle_every - 1
        return self.item_io_s * (self.straggle_x if straggles else 1.0)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor | np.ndarray, int]:
        if not 0 <= index < self.length:
            raise IndexError(index)
        self._open()
        if self.item_io_s:
            time.sleep(self.io_seconds(index))
        if self.item_cpu_s:
            burn_cpu(self.item_cpu_s)
        if self.numpy:
            return np.full(
                self.item_shape, float(index % 7), dtype=np.float32
            ), index % self.num_classes
        return torch.full(self.item_shape, float(index % 7)), index % self.num_classes


class BusyCollate:
    """torch's default collate after `seconds` of CPU per batch: a collate_fn that does real
    work (padding, masking, mixing). Module-level, so that it pickles for spawned workers."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __call__(self, items: list[Any]) -> Any:
        burn_cpu(self.seconds)
        return default_collate(items)


class SleepStep(EmulatedAccelerator):
    """A training step of `host_seconds` of main-thread CPU, then `seconds` of emulated device work
    that leaves the CPU free."""

    def __init__(self, seconds: float, host_seconds: float = 0.0):
        super().__init__()
        self.seconds = seconds
        self.host_seconds = host_seconds

    def device_seconds(self, batch: object) -> float:
        return self.seconds

    def __call__(self, batch: object) -> None:
        if self.host_seconds:
            burn_cpu(self.host_seconds)
        super().__call__(batch)


@dataclass(frozen=True)
class SimSpec:
    cpu_ms: float = 2.0
    io_ms: float = 0.0
    step_ms: float = 20.0
    host_ms: float = 0.0
    batch: int = 16
    shape: tuple[int, ...] = (3, 32, 32)
    length: int = 4096
    open_ms: float = 0.0
    straggle_every: int = 0
    straggle_x: float = 1.0
    collate_ms: float = 0.0
    numpy: bool = False

    @classmethod
    def parse(cls, text: str | None) -> SimSpec:
        """'cpu_ms=2,io_ms=0,step_ms=20,host_ms=0,batch=16,shape=3x32x32,length=4096,open_ms=0,
        straggle_every=0,straggle_x=1,collate_ms=0,numpy=0' (any subset)."""
        spec = parse_params(cls, text, "sim")
        # length and batch are the Workload's to check, with the message every workload gets.
        if spec.straggle_every < 0 or spec.straggle_x < 1:
            raise WorkloadError(
                f"bad sim parameters {text!r}: straggle_every must be >= 0 and straggle_x >= 1"
            )
        return spec

    def extras(self) -> dict[str, float]:
        """The epoch and storage parameters away from their defaults, for the name and details."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name in ("open_ms", "straggle_every", "straggle_x", "collate_ms", "numpy")
            and getattr(self, f.name) != f.default
        }

    def expected_samples_per_s(self, workers_cpus: float) -> float:
        """Ideal rate with `workers_cpus` cores of loading: min(device rate, loader rate)."""
        step_s = (self.step_ms + self.host_ms) / 1000
        device = self.batch / step_s if step_s else float("inf")
        loader = workers_cpus / (self.cpu_ms / 1000) if self.cpu_ms else float("inf")
        return min(device, loader)


def simulated_workload(spec: SimSpec, name: str | None = None) -> Workload:
    dataset = SimulatedDataset(
        spec.length,
        spec.cpu_ms,
        spec.io_ms,
        spec.shape,
        open_ms=spec.open_ms,
        straggle_every=spec.straggle_every,
        straggle_x=spec.straggle_x,
        numpy=spec.numpy,
    )
    label = name or (
        f"sim(cpu_ms={spec.cpu_ms:g},io_ms={spec.io_ms:g},step_ms={spec.step_ms:g},"
        f"batch={spec.batch})"
    )
    if spec.host_ms:
        label = label[:-1] + f",host_ms={spec.host_ms:g})"
    for key, value in spec.extras().items():
        label = label[:-1] + f",{key}={value:g})"
    return Workload(
        dataset,
        spec.batch,
        SleepStep(spec.step_ms / 1000, spec.host_ms / 1000),
        name=label,
        device=torch.device("cpu"),
        collate_fn=BusyCollate(spec.collate_ms / 1000) if spec.collate_ms else None,
        details={
            "simulated": {
                "cpu_ms": spec.cpu_ms,
                "io_ms": spec.io_ms,
                "step_ms": spec.step_ms,
                "host_ms": spec.host_ms,
                "shape": list(spec.shape),
                **spec.extras(),
            }
        },
    )
