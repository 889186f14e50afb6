"""Which training rank this process is, as the launchers say it: an initialised
torch.distributed first (mp.spawn sets no variable at all; Lightning sets LOCAL_RANK, WORLD_SIZE
and NODE_RANK but not RANK), then torchrun's and Slurm's variables.

The ranks on one node share its CPUs and memory; one rank (global rank 0) writes the results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from autotune.slurm_env import positive_int, ranks_on_node


@dataclass(frozen=True)
class Ranks:
    rank: int
    world: int
    local_world: int  # ranks sharing this node
    source: str  # what said so
    store: Any = None  # the process group's key-value store, where torch.distributed is up

    @property
    def writes(self) -> bool:
        return self.rank == 0

    @property
    def several(self) -> bool:
        return self.world > 1


def _int(env: Mapping[str, str], *names: str) -> int | None:
    for name in names:
        value = env.get(name)
        if value is not None and value.isdigit():
            return int(value)
    return None


def find(environ: Mapping[str, str] | None = None, dist: Any = None) -> Ranks:
    """This process's ranks. `dist` is torch.distributed (injected by tests)."""
    env = os.environ if environ is None else environ
    if dist is None:
        import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        world = dist.get_world_size()
        local, said = ranks_on_node(env)
        if said == "one process" and world > 1:
            # No launcher said how many ranks share this node (mp.spawn): taken as all of them.
            # Sizing for fewer CPUs than the node has is slower; sizing for more oversubscribes.
            local, said = world, "torch.distributed's world (no launcher variable: one node)"
        return Ranks(dist.get_rank(), world, local, f"torch.distributed; {said}", _store(dist))
    rank = _int(env, "RANK", "SLURM_PROCID")
    world = positive_int(env.get("WORLD_SIZE")) or positive_int(env.get("SLURM_NTASKS")) or 1
    local, said = ranks_on_node(env)
    if rank is None:  # Lightning's launcher: the node's rank and the local one
        local_rank, node = _int(env, "LOCAL_RANK"), _int(env, "NODE_RANK") or 0
        if local_rank is not None:
            per_node = local if said != "one process" else world
            rank = node * per_node + local_rank
            local, said = per_node, f"LOCAL_RANK and WORLD_SIZE ({said})"
    return Ranks(rank or 0, world, local, said)


def _store(dist: Any) -> Any:
    """The default process group's store (a TCPStore under torchrun and init_process_group):
    ranks talk through it without a collective, which the training's own could interleave with."""
    try:
        from torch.distributed import distributed_c10d

        return distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - another torch, or a backend without one: no lockstep
        return None
