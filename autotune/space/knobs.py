"""Every knob autotune tunes, described once.

The configuration (`LoaderConfig`), the search space and its grid, the recipe's models and JSON
schema, the report's columns, short labels and the cheapest-within-noise order are all derived
from `KNOBS`: a new DataLoader argument is one entry here (plus, for a transfer knob, the code
that applies it in transfer/).
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import torch
from torch.torch_version import TorchVersion

from autotune.strenum import StrEnum


class Target(StrEnum):
    """Where a knob's value goes."""

    DATALOADER = "dataloader"  # an argument of torch.utils.data.DataLoader
    TRANSFER = "transfer"  # applied as batches move to the device (transfer.DeviceLoader)


class Kind(StrEnum):
    COUNT = "count"  # a non-negative integer, labelled with its value ('w4', 'pf2')
    FLAG = "flag"  # on/off, labelled by its short name when not at its default ('persist')
    CHOICE = "choice"  # one of `choices` (strings) or None (torch picks), labelled by the value


class Needs(StrEnum):
    """What a knob needs to be set to anything but its default; the value completes the rule's
    message ('pin_memory needs a CUDA device')."""

    WORKERS = "num_workers > 0"
    CUDA = "a CUDA device"
    IMAGE_BATCH = "4-D floating-point inputs"


@dataclass(frozen=True)
class Facts:
    """What this machine and workload offer, against which `Needs` are checked."""

    workers: bool
    cuda: bool
    image_batch: bool

    def meets(self, need: Needs) -> bool:
        return {
            Needs.WORKERS: self.workers,
            Needs.CUDA: self.cuda,
            Needs.IMAGE_BATCH: self.image_batch,
        }[need]


@dataclass(frozen=True)
class Knob:
    name: str  # exactly the torch argument it sets
    target: Target
    kind: Kind
    default: Any  # torch's default, or None where torch picks one itself
    header: str  # the report table's column
    short: str  # label token: the prefix of a count ('w' -> 'w4'), the name of a flag that is set
    doc: str  # one line, for the recipe's schema
    values: tuple[Any, ...] = (
        False,
        True,
    )  # what the search tries (num_workers: the space's range)
    needs: tuple[Needs, ...] = ()
    minimum: int | None = None  # a count's smallest valid value
    implied: Any = None  # the value torch uses when `default` is None
    # Rank in the "cheapest" order among tied configurations (lower decides first); `cost` maps a
    # value to how much it costs. None: the knob does not make a configuration cheaper.
    cost_rank: int | None = None
    cost: Callable[[Any], float] = bool
    omit_default: bool = False  # passed to torch only when set: recipes stay valid on older torch
    # Searched only when the user asks (TuneOptions.knobs, --knob): it changes what the training
    # sees, not only how fast, and that is the user's call (as tf.data's `deterministic`).
    opt_in: bool = False
    min_torch: str | None = None  # the first torch version that has the argument
    choices: tuple[str, ...] = ()  # a CHOICE's accepted values (`values`: those searched)

    @property
    def annotation(self) -> Any:
        if self.kind is Kind.FLAG:
            return bool
        if self.kind is Kind.CHOICE:
            return str | None
        return int if self.default is not None else int | None

    def supported(self) -> bool:
        """The installed torch has this argument."""
        return self.min_torch is None or TorchVersion(torch.__version__) >= self.min_torch

    def effective(self, value: Any) -> Any:
        return self.implied if value is None else value

    def label(self, value: Any) -> str | None:
        if self.kind is Kind.COUNT:
            return (
                None
                if value is None and self.implied is None
                else f"{self.short}{self.effective(value)}"
            )
        if self.kind is Kind.CHOICE:
            return None if value == self.default else str(value)
        return self.short if value != self.default else None


# The start methods this platform offers, its default first (multiprocessing's documented order).
START_METHODS: tuple[str, ...] = tuple(multiprocessing.get_all_start_methods())

KNOBS: tuple[Knob, ...] = (
    Knob(
        "num_workers",
        Target.DATALOADER,
        Kind.COUNT,
        0,
        "workers",
        "w",
        "worker processes loading batches (0: the main process loads them)",
        values=(),
        minimum=0,
        cost_rank=0,
        cost=float,
    ),
    Knob(
        "pin_memory",
        Target.DATALOADER,
        Kind.FLAG,
        False,
        "pin",
        "pin",
        "collate batches into page-locked memory, for faster and asynchronous copies to the GPU",
        needs=(Needs.CUDA,),
        cost_rank=3,
    ),
    Knob(
        "prefetch_factor",
        Target.DATALOADER,
        Kind.COUNT,
        None,
        "prefetch",
        "pf",
        "batches each worker loads ahead (torch's default: 2)",
        values=(1, 2, 4, 8),
        needs=(Needs.WORKERS,),
        minimum=1,
        implied=2,
        cost_rank=1,
        cost=float,
    ),
    Knob(
        "persistent_workers",
        Target.DATALOADER,
        Kind.FLAG,
        False,
        "persist",
        "persist",
        "keep the workers alive between epochs",
        needs=(Needs.WORKERS,),
    ),
    Knob(
        "non_blocking",
        Target.TRANSFER,
        Kind.FLAG,
        False,
        "non_block",
        "nb",
        "copy host-to-device asynchronously (Tensor.to(non_blocking=True))",
        needs=(Needs.CUDA,),
    ),
    Knob(
        "channels_last",
        Target.TRANSFER,
        Kind.FLAG,
        False,
        "ch_last",
        "cl",
        "convert 4-D image batches to the channels-last memory format on the device",
        needs=(Needs.IMAGE_BATCH,),
    ),
    Knob(
        "side_stream_prefetch",
        Target.TRANSFER,
        Kind.FLAG,
        False,
        "stream",
        "stream",
        "copy the next batch on a side CUDA stream while the current one computes",
        needs=(Needs.CUDA,),
    ),
    # New knobs go last: LoaderConfig's positional order stays what it was.
    Knob(
        "in_order",
        Target.DATALOADER,
        Kind.FLAG,
        True,
        "in_order",
        "unordered",
        "deliver batches in sampler order; false hands out whichever batch is ready first, so one"
        " slow item does not hold back the rest (the batch order then varies from run to run)",
        needs=(Needs.WORKERS,),
        cost_rank=4,
        cost=lambda ordered: not ordered,
        omit_default=True,
        min_torch="2.6",
        opt_in=True,
    ),
    # A worker's start method: fork is quick to start and shares the parent's pages; forkserver and
    # spawn start each worker from a fresh interpreter (slower to start, more memory, the dataset
    # must pickle, and workers do not see state the main process set up after import).
    Knob(
        "multiprocessing_context",
        Target.DATALOADER,
        Kind.CHOICE,
        None,
        "mp_context",
        "",
        "how worker processes start: fork, forkserver or spawn (torch's default: the platform's,"
        " fork on Linux before Python 3.14)",
        # None is the platform's default (the first start method); the search tries the others.
        values=(None, *START_METHODS[1:]),
        choices=START_METHODS,
        needs=(Needs.WORKERS,),
        cost_rank=5,
        cost=lambda method: float(method not in (None, START_METHODS[0])),
        opt_in=True,
    ),
)
BY_NAME: dict[str, Knob] = {k.name: k for k in KNOBS}
# The measured peak RAM of a configuration ranks here among the knobs' costs: after workers and
# prefetch, before pinning (whole MiB; finer differences are measurement jitter).
RAM_COST_RANK = 2


def opt_in_knobs() -> tuple[str, ...]:
    return tuple(k.name for k in KNOBS if k.opt_in and k.supported())


def knobs_for(target: Target) -> tuple[Knob, ...]:
    return tuple(k for k in KNOBS if k.target is target)


def cost_order() -> tuple[Knob, ...]:
    """The knobs that make a configuration cheaper, the most decisive first."""
    ranked = [(k.cost_rank, k) for k in KNOBS if k.cost_rank is not None]
    return tuple(k for _, k in sorted(ranked, key=lambda rank_knob: rank_knob[0]))


def passed_to_torch(values: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """The arguments of `target` worth passing: none that needs workers when there are none (torch
    rejects them), no None (torch picks), no omit_default knob at its default."""
    workers = values.get("num_workers", 0) > 0
    out = {}
    for knob in knobs_for(target):
        value = values.get(knob.name, knob.default)
        if value is None or (Needs.WORKERS in knob.needs and not workers):
            continue
        if knob.omit_default and value == knob.default:
            continue
        out[knob.name] = value
    return out
