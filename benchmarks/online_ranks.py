"""`autotune bench --online --ranks N`: each bench workload trained as N DDP ranks on this node.

Every way is N processes (torch.multiprocessing's spawn), one process group (gloo on the CPU,
NCCL on CUDA), a DistributedSampler over the workload's dataset, and a step that all-reduces
after the workload's own, as DDP's gradient all-reduce does: the slowest rank sets everyone's
pace. A way's time at step i is the slowest rank's.

(b) is autotune.DataLoader in every rank, as `autotune run` would make it: the ranks find each
other through the process group, share the node's CPUs and memory, and explore in lockstep.
(c) is the best per-rank configuration, run from step 0. The single-process grid's best does not
carry over (N pools now share the node's cores), and N-rank grids of every point would take
hours on the bench machine: (c) is the fastest, over a short N-rank training each, of that best,
the same with its workers divided among the ranks, each with and without persistent workers
(`rank_candidates`), and the configuration (b) chose, so that (c) is never a point (b) found
faster. (b) therefore runs first. (a), PyTorch's defaults, is not run: it says nothing about
ranks that the single-process bench does not.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import socket
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import DistributedSampler

from autotune.errors import OptionsError
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.space.config import LoaderConfig
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from benchmarks.online_figures import StepTimes

# Steps of each candidate's short N-rank training when (c) is chosen.
CANDIDATE_STEPS = 300
SETTLE_STEPS = 50  # the start-up and the first fill of the pool, left out of a candidate's rank


def rank_candidates(single: LoaderConfig, ranks: int) -> list[LoaderConfig]:
    """(c)'s candidates, cheapest first: the single-process grid's best, and the same with its
    workers divided among the ranks (the node's cores are shared); each also with persistent
    workers, since a DistributedSampler makes every epoch `ranks` times shorter and a pool's
    restart that much dearer."""
    if not single.num_workers:
        return [single]
    divided = replace(single, num_workers=max(1, math.ceil(single.num_workers / ranks)))
    return list(
        dict.fromkeys(
            c for base in (divided, single) for c in (base, replace(base, persistent_workers=True))
        )
    )


@dataclass(frozen=True)
class RankRun:
    """One way's N-rank training: what each rank process needs (it pickles for spawn)."""

    spec: str
    device: str
    ranks: int
    steps: int
    port: int
    out: str  # a folder each rank writes its result to
    config: dict[str, Any] | None  # a fixed configuration's knobs; None: autotune.DataLoader
    online: dict[str, Any]  # autotune.DataLoader's options
    transfer: dict[str, Any]  # the loop's transfer knobs (non_blocking, channels_last, ...)


@dataclass(frozen=True)
class RanksResult:
    times: StepTimes  # the slowest rank's time at each step
    chosen: list[str | None]  # the configuration each rank ran at the last step (online)
    state: dict[str, Any] | None  # rank 0's tuner state (online)


class _AllReduced:
    """The workload's step, then an all-reduce of one value, as DDP ends a step."""

    def __init__(self, step: Callable[[Any], Any]):
        self._step = step
        self._token = torch.zeros(1)

    def step(self, batch: Any) -> None:
        self._step(batch)
        dist.all_reduce(self._token)


def _rank_main(rank: int, run: RankRun) -> None:
    from benchmarks.online_loop import train  # in the spawned process

    # A spawned process inherits the spawn start method, and its loader's workers would each
    # import torch again (seconds a pool): a rank starts its workers as torchrun's do, with the
    # platform's default (fork on Linux).
    multiprocessing.set_start_method(None, force=True)
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(run.port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(run.ranks),
        LOCAL_WORLD_SIZE=str(run.ranks),
    )
    workload = load_workload(run.spec, WorkloadOptions(device=run.device))
    device = workload.device or torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(
        "nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=run.ranks
    )
    try:
        if workload.batch_sampler is not None:
            raise OptionsError(f"{run.spec}: a batch_sampler cannot be split among ranks")
        sampler = DistributedSampler(
            workload.dataset, num_replicas=run.ranks, rank=rank, shuffle=workload.shuffle
        )
        args = {**workload.loader_arguments(), "sampler": sampler, "shuffle": False}
        if run.config is None:
            make = lambda: DataLoader(**args, online=OnlineOptions(**run.online))  # noqa: E731
        else:
            config = LoaderConfig(**run.config)
            make = lambda: TorchDataLoader(**args, **config.dataloader_kwargs())  # noqa: E731
        times, loader = train(
            _AllReduced(workload.step), make, device, run.transfer, run.steps, f"rank {rank}"
        )
        state = loader.tuner_state if isinstance(loader, DataLoader) else None
        result = {
            "stamps": list(times.stamps),
            # What the rank runs at the end: the configuration all ranks must end on.
            "chosen": None if state is None else loader.config.label(),
            "state": None
            if state is None
            else {
                "exploration_ended_at": state.exploration_ended_at,
                "exploration_cost_s": state.exploration_cost_s,
                "stop_reason": state.stop_reason,
                "chosen": None if state.chosen is None else state.chosen.label(),
            },
        }
        Path(run.out, f"rank{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train_ranks(
    spec: str,
    device: str,
    ranks: int,
    steps: int,
    config: LoaderConfig | None,
    online: OnlineOptions,
    transfer: dict[str, Any],
) -> RanksResult:
    """One way's training as `ranks` processes; a rank that fails fails the way."""
    with tempfile.TemporaryDirectory(prefix="autotune-ranks-") as out:
        run = RankRun(
            spec,
            device,
            ranks,
            steps,
            _free_port(),
            out,
            None if config is None else config.as_dict(),
            online.model_dump(mode="json"),
            transfer,
        )
        mp.start_processes(_rank_main, args=(run,), nprocs=ranks, start_method="spawn")
        results = [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(ranks)]
    stamps = tuple(max(column) for column in zip(*(r["stamps"] for r in results), strict=False))
    return RanksResult(StepTimes(stamps), [r["chosen"] for r in results], results[0]["state"])


def ideal_for_ranks(
    spec: str, device: str, ranks: int, candidates: list[LoaderConfig], log: Callable[[str], None]
) -> tuple[LoaderConfig, str]:
    """(c): the fastest of `candidates` over steps [SETTLE_STEPS, CANDIDATE_STEPS) of a
    training of `ranks` ranks each, and how it was found. Ranked after the start-up, which a
    short run would weigh many times more than the compared runs do (a 300-step ranking that
    counted it chose 3 workers where 5 ran 20% faster over 1,500 steps); epoch restarts, which
    recur, stay in."""
    timed = []
    for config in candidates:
        done = train_ranks(
            spec,
            device,
            ranks,
            CANDIDATE_STEPS,
            config,
            OnlineOptions(enabled=False),
            config.transfer_kwargs(),
        )
        rate = (CANDIDATE_STEPS - SETTLE_STEPS) / done.times.span(SETTLE_STEPS, CANDIDATE_STEPS)
        log(f"  (c) candidate {config.label()}: {rate:.1f} steps/s over {ranks} ranks")
        timed.append((rate, config))
    best = max(timed, key=lambda rate_config: rate_config[0])[1]
    how = ", ".join(f"{c.label()} {r:.1f} steps/s" for r, c in timed)
    return best, (
        f"the fastest over steps {SETTLE_STEPS}-{CANDIDATE_STEPS} of {ranks} ranks ({how})"
    )
