"""Fakes for the online loader's tests: a dataset of its own indices, a policy that switches on a
schedule, a clock driven by the configuration running."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
import torch
from torch.utils.data import Dataset

from autotune.online.meter import Step
from autotune.space.config import LoaderConfig


@pytest.fixture(autouse=True)
def _nothing_written_at_exit(monkeypatch):
    """Loaders in tests write results only where a test asks (results_dir in its options)."""
    monkeypatch.setenv("AUTOTUNE_ONLINE", '{"results_dir": null}')


class Indices(Dataset):
    """Item i is i: a batch is its own index list."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


W0 = LoaderConfig()
W1 = LoaderConfig(num_workers=1, prefetch_factor=1)
W2 = LoaderConfig(num_workers=2, prefetch_factor=2)
W2_PERSIST = LoaderConfig(num_workers=2, prefetch_factor=1, persistent_workers=True)


@dataclass
class SwitchEvery:
    """Switches to the next configuration of `configs` (cycling) after every `k` batches, in
    every epoch: the switches the stream must survive."""

    k: int
    configs: tuple[LoaderConfig, ...] = (W0, W2, W1, W0, W2_PERSIST)
    exploring: bool = True
    switches: int = 0
    current: LoaderConfig = field(init=False)

    def __post_init__(self) -> None:
        self._cycle = itertools.cycle(self.configs)
        self.current = next(self._cycle)
        self._n = 0

    def observe(self, step: Step) -> LoaderConfig | None:
        self._n += 1
        if self._n % self.k:
            return None
        self.current = next(self._cycle)
        self.switches += 1
        return self.current

    def epoch_ended(self) -> LoaderConfig | None:
        return None


class StepClock:
    """A clock whose steps take `step_s[num_workers]` (the last entry for more workers). Without
    `waiting`, each reading advances it by half a step (the meter reads it twice a step). With it
    (true while the loop is inside `__next__`), a step's `wait_share[num_workers]` passes inside
    `__next__` and the rest in the loop's own work: without workers the fetch is the wait."""

    def __init__(
        self,
        read_config,
        step_s: tuple[float, ...],
        waiting=None,
        wait_share: tuple[float, ...] = (0.5, 0.02),
    ):
        self.read_config = read_config
        self.step_s = step_s
        self.waiting = waiting
        self.wait_share = wait_share
        self.now = 0.0

    def __call__(self) -> float:
        workers = self.read_config().num_workers
        step = self.step_s[min(workers, len(self.step_s) - 1)]
        if self.waiting is None:
            self.now += step / 2
        else:
            share = self.wait_share[min(workers, len(self.wait_share) - 1)]
            self.now += step * (share if self.waiting() else 1 - share)
        return self.now


def as_lists(batches) -> list:
    return [b.tolist() if isinstance(b, torch.Tensor) else b for b in batches]


@dataclass
class Scripted:
    """Switches to each configuration at its step, then stops exploring; records each step,
    the configuration it ran and the running iterator."""

    loader: object
    plan: dict[int, LoaderConfig]
    stop_at: int
    current: LoaderConfig = W0
    exploring: bool = True
    steps: list = field(default_factory=list)

    def observe(self, step: Step):
        session = self.loader._session
        self.steps.append((self.current, step, session.running))
        nxt = self.plan.get(len(self.steps))
        if len(self.steps) == self.stop_at:
            self.exploring = False
        if nxt is not None:
            self.current = nxt
        return nxt

    def epoch_ended(self):
        return None


def step_at(index: int, segment_step: int, startup_s: float | None = None) -> Step:
    """A 10 ms step that waited 1 ms, at `segment_step` of its segment (its start-up, if any)."""
    return Step(index, 0.01, 0.001, segment_step, startup_s, backlog=None)
