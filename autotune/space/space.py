"""The search space: which values each knob may take on this machine, for this workload."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

from autotune.space.config import KNOBS, LoaderConfig

# Beyond the core count: workers that wait on storage or network sleep, so more of them than
# cores still raises throughput. 4x is where tf.data-style tuners also stop looking.
WORKERS_PER_CPU = 4
DEFAULT_MAX_WORKERS = 32
PREFETCH_FACTORS = (1, 2, 4, 8)


def max_workers_for(usable_cpus: int, cap: int = DEFAULT_MAX_WORKERS) -> int:
    return max(1, min(cap, WORKERS_PER_CPU * usable_cpus))


@dataclass(frozen=True)
class SearchSpace:
    max_workers: int
    cuda: bool
    channels_last_ok: bool
    prefetch_factors: tuple[int, ...] = PREFETCH_FACTORS

    def problems(self, config: LoaderConfig) -> list[str]:
        out = config.problems(cuda=self.cuda, channels_last_ok=self.channels_last_ok)
        if config.num_workers > self.max_workers:
            out.append(f"num_workers={config.num_workers} exceeds the cap of {self.max_workers}")
        return out

    def suggest(self, trial) -> LoaderConfig:
        """Define-by-run: conditional knobs are only asked for where they are valid."""
        workers = trial.suggest_int("num_workers", 0, self.max_workers)
        prefetch, persistent = None, False
        if workers > 0:
            prefetch = trial.suggest_categorical("prefetch_factor", list(self.prefetch_factors))
            persistent = trial.suggest_categorical("persistent_workers", [False, True])
        pin = non_blocking = stream = False
        if self.cuda:
            pin = trial.suggest_categorical("pin_memory", [False, True])
            non_blocking = trial.suggest_categorical("non_blocking", [False, True])
            stream = trial.suggest_categorical("side_stream_prefetch", [False, True])
        channels_last = False
        if self.channels_last_ok:
            channels_last = trial.suggest_categorical("channels_last", [False, True])
        return LoaderConfig(workers, pin, prefetch, persistent, non_blocking, channels_last, stream)

    def params(self, config: LoaderConfig) -> dict:
        """The optuna params `suggest` would ask for to produce `config` (for enqueue_trial)."""
        names = ["num_workers"]
        if config.num_workers > 0:
            names += ["prefetch_factor", "persistent_workers"]
        if self.cuda:
            names += ["pin_memory", "non_blocking", "side_stream_prefetch"]
        if self.channels_last_ok:
            names.append("channels_last")
        params = {name: getattr(config, name) for name in names}
        if config.num_workers > 0:
            params["prefetch_factor"] = config.effective_prefetch_factor
        return params

    def grid(self, workers: list[int] | None = None) -> Iterator[LoaderConfig]:
        """Every valid point (optionally over a subset of worker counts): the exhaustive baseline."""
        bools = (False, True)
        device_choices = list(itertools.product(bools, bools, bools)) if self.cuda else [(False,) * 3]
        layout_choices = bools if self.channels_last_ok else (False,)
        for w in workers if workers is not None else range(self.max_workers + 1):
            loader_choices = ([(None, False)] if w == 0
                              else list(itertools.product(self.prefetch_factors, bools)))
            for (pf, persist), (pin, nb, stream), cl in itertools.product(
                    loader_choices, device_choices, layout_choices):
                yield LoaderConfig(w, pin, pf, persist, nb, cl, stream)

    def nearest_first(self, config: LoaderConfig) -> list[LoaderConfig]:
        """Every valid point, the closest to `config` first: fewest workers apart, then fewest
        other knobs changed, then the grid's order (cheapest first)."""
        others = [k for k in KNOBS if k != "num_workers"]

        def distance(other: LoaderConfig) -> tuple[int, int]:
            changed = sum(getattr(other, k) != getattr(config, k) for k in others)
            return abs(other.num_workers - config.num_workers), changed
        return sorted(self.grid(), key=distance)
