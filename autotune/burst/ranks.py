"""Measure a configuration on K ranks at once, loading as a K-rank job on one node would.

Rank 0 is the tuning process; ranks 1..K-1 are helper processes started once per tuning, each
with its own copy of the workload, its own DataLoader workers and the same per-rank CPU budget.
For every trial rank 0 sends the configuration, all ranks start their bursts together (a barrier)
and so compete for the node's cores, and the configuration scores as its slowest rank: in
data-parallel training every step waits for the last rank's batch.

torch.distributed carries it: the default group uses NCCL where the ranks have GPUs (as DDP does)
and gloo on CPU; configurations and results always travel over a gloo group.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from autotune.burst.result import BurstResult
from autotune.burst.runner import BurstSettings, run_burst
from autotune.errors import AutotuneError, OptionsError, WorkloadError
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.telemetry.nvml import NvmlSampler
from autotune.workload.base import Workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

# A burst plus worker start-up on a loaded node stays far below this; a rank that died makes the
# others fail after it instead of waiting forever.
COLLECTIVE_TIMEOUT = timedelta(minutes=10)

WorkloadFactory = Callable[[torch.device], Workload]


def _load_on(spec: str | None, options: WorkloadOptions, device: torch.device) -> Workload:
    return load_workload(spec, options.model_copy(update={"device": str(device)}))


def spec_factory(spec: str | None, options: WorkloadOptions) -> WorkloadFactory:
    """Builds the CLI's workload in a helper rank, on that rank's device (picklable for spawn)."""
    return partial(_load_on, spec, options)


def backend_for(device: torch.device) -> str:
    return "nccl" if device.type == "cuda" and dist.is_nccl_available() else "gloo"


def rank_device(device: torch.device, rank: int) -> torch.device:
    """One GPU per rank, as torchrun's LOCAL_RANK convention has it; CPU ranks share the CPU."""
    return torch.device("cuda", rank) if device.type == "cuda" else device


def slowest(results: list[BurstResult]) -> BurstResult:
    return min(results, key=lambda r: r.samples_per_s)


@dataclass(frozen=True)
class _Request:
    config: LoaderConfig
    settings: BurstSettings


Outcome = BurstResult | str  # a result, or what went wrong on that rank


class _Channel:
    """The process group as seen by one rank: join, exchange, leave."""

    def __init__(self, rendezvous: str, rank: int, world: int, device: torch.device):
        self.rank = rank
        self.world = world
        backend = backend_for(device)
        extra: dict[str, Any] = {"device_id": device} if backend == "nccl" else {}
        dist.init_process_group(
            backend,
            init_method=rendezvous,
            rank=rank,
            world_size=world,
            timeout=COLLECTIVE_TIMEOUT,
            **extra,
        )
        # Every rank joins the group, so it is never torch's NON_GROUP_MEMBER marker.
        group = None if backend == "gloo" else dist.new_group(backend="gloo")
        self.control: dist.ProcessGroup | None = group  # type: ignore[assignment]

    def send(self, request: _Request | None) -> _Request | None:
        box = [request]
        dist.broadcast_object_list(box, src=0, group=self.control)
        return box[0]

    def start_together(self) -> None:
        dist.barrier()

    def gather(self, outcome: Outcome) -> list[Outcome] | None:
        outcomes: list[Any] | None = [None] * self.world if self.rank == 0 else None
        dist.gather_object(outcome, outcomes, dst=0, group=self.control)
        return outcomes

    def close(self) -> None:
        dist.destroy_process_group()


def _burst_or_error(rank: int, measure: Callable[[], BurstResult]) -> Outcome:
    try:
        return measure()
    except Exception as exc:  # reported to rank 0, where it fails the trial
        return f"rank {rank}: {type(exc).__name__}: {exc}"


def _helper_rank(
    index: int, factory: WorkloadFactory, device: torch.device, world: int, rendezvous: str
) -> None:
    rank = index + 1
    # What torchrun would set: user factories may read them (to pick a GPU, a shard, ...).
    os.environ.update(
        LOCAL_RANK=str(rank), RANK=str(rank), LOCAL_WORLD_SIZE=str(world), WORLD_SIZE=str(world)
    )
    device = rank_device(device, rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    channel = _Channel(rendezvous, rank, world, device)
    try:
        workload: Workload | str = factory(device)
    except Exception as exc:
        workload = f"rank {rank}: building the workload failed: {type(exc).__name__}: {exc}"
    cpus = usable_cpus(ranks=world).count
    sampler = NvmlSampler.for_device(device.index or 0) if device.type == "cuda" else None
    try:
        while (request := channel.send(None)) is not None:
            channel.start_together()
            if isinstance(workload, str):
                outcome: Outcome = workload
            else:
                outcome = _burst_or_error(
                    rank,
                    partial(
                        run_burst,
                        workload,
                        request.config,
                        device,
                        request.settings,
                        usable_cpus=cpus,
                        gpu_sampler=sampler,
                    ),
                )
            channel.gather(outcome)
    finally:
        channel.close()


class RankGroup:
    """K ranks measuring together; use as a context manager around the tuning."""

    def __init__(self, ranks: int, factory: WorkloadFactory, device: torch.device):
        if ranks < 2:
            raise OptionsError("a rank group needs at least 2 ranks")
        if device.type == "cuda" and torch.cuda.device_count() < ranks:
            raise OptionsError(
                f"--ranks-per-node {ranks} needs {ranks} GPUs (one per rank);"
                f" {torch.cuda.device_count()} present"
            )
        self.ranks = ranks
        self.factory = factory
        self.device = device
        self._dir: str | None = None
        self._helpers: Any = None
        self._channel: _Channel | None = None
        self._in_step = True  # False once a collective failed: the ranks are out of step

    def __enter__(self) -> RankGroup:
        self._dir = tempfile.mkdtemp(prefix="autotune-ranks-")
        rendezvous = f"file://{os.path.join(self._dir, 'rendezvous')}"
        # spawn, not fork: the tuning process already runs threads (samplers, torch's pools).
        self._helpers = mp.start_processes(
            _helper_rank,
            args=(self.factory, self.device, self.ranks, rendezvous),
            nprocs=self.ranks - 1,
            join=False,
            start_method="spawn",
        )
        try:
            self._channel = _Channel(rendezvous, 0, self.ranks, self.device)
        except Exception as exc:
            self._stop_helpers(wait_s=0)
            raise WorkloadError(f"starting {self.ranks} ranks failed: {exc}") from exc
        return self

    def _collective(self, exchange: Callable[..., Any], *args: Any) -> Any:
        try:
            return exchange(*args)
        except RuntimeError as exc:  # a rank died or timed out
            self._in_step = False
            raise WorkloadError(f"lost the helper ranks: {exc}") from exc

    def measure(
        self, config: LoaderConfig, settings: BurstSettings, local: Callable[[], BurstResult]
    ) -> BurstResult:
        """Run `local` (rank 0's burst) while every helper rank runs the same configuration;
        return the slowest rank's result. A failure on any rank fails the configuration."""
        channel = self._channel
        assert channel is not None, "use RankGroup as a context manager"
        self._collective(channel.send, _Request(config, settings))
        self._collective(channel.start_together)
        self._in_step = False  # until rank 0 has its outcome to gather
        try:
            mine: Outcome = local()
            own_error: Exception | None = None
        except Exception as exc:
            mine, own_error = f"rank 0: {type(exc).__name__}: {exc}", exc
        self._in_step = True
        outcomes = self._collective(channel.gather, mine) or []
        if isinstance(own_error, AutotuneError):
            raise own_error
        errors = [o for o in outcomes if isinstance(o, str)]
        if errors:
            raise RuntimeError("; ".join(errors))
        return slowest([o for o in outcomes if isinstance(o, BurstResult)])

    def _stop_helpers(self, wait_s: float) -> None:
        if self._helpers is not None:
            for process in self._helpers.processes:
                process.join(timeout=wait_s)
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=10)
            self._helpers = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # A clean end tells the helpers to leave; after an error or an interrupt mid-trial the
        # ranks may sit in different collectives, so the helpers are stopped instead.
        graceful = exc_type is None and self._in_step
        if self._channel is not None:
            try:
                if graceful:
                    self._channel.send(None)
            finally:
                self._channel.close()
                self._channel = None
        self._stop_helpers(wait_s=30 if graceful else 0)
