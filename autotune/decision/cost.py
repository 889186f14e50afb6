"""One cost order: which of two configurations is cheaper, when their rates tie."""

from __future__ import annotations

from autotune.space.config import LoaderConfig
from autotune.space.knobs import RAM_COST_RANK, cost_order


def cost(config: LoaderConfig, ram_mib: float | None = None) -> tuple[float, ...]:
    """Lexicographic, in the registry's cost order (workers, prefetch, RAM, pinning, ...). The RAM
    in whole MiB, finer being measurement jitter; unmeasured RAM (None) compares as equal, so
    that the knobs alone decide."""
    costs = [(k.cost_rank, config.cost_of(k)) for k in cost_order() if k.cost_rank is not None]
    costs.append((RAM_COST_RANK, 0.0 if ram_mib is None else float(round(ram_mib))))
    return tuple(c for _, c in sorted(costs, key=lambda rank_cost: rank_cost[0]))
