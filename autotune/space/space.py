"""The search space: which values each knob of the registry may take on this machine, for this
workload. Suggesting, the optuna params of a point, the grid and the nearest points all walk the
registry: a knob applies where its needs are met and the installed torch has it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterator

from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME, KNOBS, Facts, Knob, cost_order

# Beyond the core count: workers that wait on storage or network sleep, so more of them than
# cores still raises throughput. 4x is where tf.data-style tuners also stop looking.
WORKERS_PER_CPU = 4
DEFAULT_MAX_WORKERS = 32
WORKERS = BY_NAME["num_workers"]


def max_workers_for(usable_cpus: int, cap: int = DEFAULT_MAX_WORKERS) -> int:
    return max(1, min(cap, WORKERS_PER_CPU * usable_cpus))


@dataclass(frozen=True)
class SearchSpace:
    max_workers: int
    cuda: bool
    channels_last_ok: bool
    opted_in: frozenset[str] = frozenset()  # opt-in knobs (knobs.Knob.opt_in) the user asked for

    def problems(self, config: LoaderConfig) -> list[str]:
        out = config.problems(cuda=self.cuda, channels_last_ok=self.channels_last_ok)
        if config.num_workers > self.max_workers:
            out.append(f"num_workers={config.num_workers} exceeds the cap of {self.max_workers}")
        return out

    def applies(self, knob: Knob, workers: int) -> bool:
        """Whether `knob` is searched here, at this worker count."""
        facts = Facts(workers=workers > 0, cuda=self.cuda, image_batch=self.channels_last_ok)
        wanted = not knob.opt_in or knob.name in self.opted_in
        return wanted and knob.supported() and all(facts.meets(need) for need in knob.needs)

    def left_out(self) -> dict[str, str]:
        """Each knob this space does not search, with why: what it needs that is missing here,
        a torch too old for it, or an opt-in knob nobody asked for."""
        facts = Facts(
            workers=self.max_workers > 0, cuda=self.cuda, image_batch=self.channels_last_ok
        )
        out = {}
        for knob in KNOBS:
            missing = [need for need in knob.needs if not facts.meets(need)]
            if not knob.supported():
                out[knob.name] = f"needs torch >= {knob.min_torch}"
            elif missing:
                out[knob.name] = "needs " + " and ".join(missing)
            elif knob.opt_in and knob.name not in self.opted_in:
                out[knob.name] = f"opt-in: --knob {knob.name} searches it"
        return out

    def searches(self, name: str) -> bool:
        """Whether the knob is searched at some worker count (is part of this space at all)."""
        return self.applies(BY_NAME[name], self.max_workers)

    def values(self, knob: Knob) -> tuple[Any, ...]:
        return tuple(range(self.max_workers + 1)) if knob is WORKERS else knob.values

    def suggest(self, trial) -> LoaderConfig:
        """Define-by-run: a knob is asked for only where it applies (num_workers first)."""
        workers = trial.suggest_int(WORKERS.name, 0, self.max_workers)
        values = {WORKERS.name: workers}
        for knob in KNOBS[1:]:
            if self.applies(knob, workers):
                values[knob.name] = trial.suggest_categorical(knob.name, list(self.values(knob)))
        return LoaderConfig(**values)

    def params(self, config: LoaderConfig) -> dict[str, Any]:
        """The optuna params `suggest` would ask for to produce `config` (for enqueue_trial)."""
        return {
            k.name: k.effective(getattr(config, k.name))
            for k in KNOBS
            if k is WORKERS or self.applies(k, config.num_workers)
        }

    def grid(self, workers: list[int] | None = None) -> Iterator[LoaderConfig]:
        """Every valid point (optionally over a subset of worker counts): the exhaustive baseline,
        cheapest first (the knobs that decide cost vary slowest)."""
        others = [k for k in (*cost_order(), *KNOBS) if k is not WORKERS]
        others = list(dict.fromkeys(others))  # each knob once, cost order first
        for w in workers if workers is not None else self.values(WORKERS):
            choices = [self.values(k) if self.applies(k, w) else (k.default,) for k in others]
            for combo in itertools.product(*choices):
                yield LoaderConfig(
                    num_workers=w, **{k.name: v for k, v in zip(others, combo, strict=True)}
                )

    def nearest_first(self, config: LoaderConfig) -> list[LoaderConfig]:
        """Every valid point, the closest to `config` first: fewest workers apart, then fewest
        other knobs changed, then the grid's order (cheapest first)."""
        others = [k.name for k in KNOBS if k is not WORKERS]

        def distance(other: LoaderConfig) -> tuple[int, int]:
            changed = sum(getattr(other, k) != getattr(config, k) for k in others)
            return abs(other.num_workers - config.num_workers), changed

        return sorted(self.grid(), key=distance)
