"""`autotune.DataLoader`: torch's DataLoader, tuned online during the first epoch of the real run.

Constructed exactly as torch's (same arguments, same checks: torch's own `__init__` runs), plus
three keyword-only ones: `recipe=` (a saved recipe to apply), `fixed=` (knobs not to tune) and
`online=` (OnlineOptions or a dict; also read from $AUTOTUNE_ONLINE). The knob arguments given
are the starting point of the tuning; `fixed` names those to keep as given.

Each epoch iterates the user's (batch) sampler once, as torch does, and draws the epoch's base
seed from the loader's generator (or torch's global RNG) as torch does, in torch's order, so the
batches and every later random draw are those of a torch DataLoader built with the same
arguments. The batches are made by inner loaders of torch's own class (saved here, so that a
torch.utils.data.DataLoader patched to point at this class does not recurse), one per
configuration, reading the epoch's index stream (index_stream.py, inner.py); their workers are
seeded from a private generator seeded by the epoch's base seed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import torch
from torch.utils.data import IterableDataset

from autotune.online.inner import TORCH_DATALOADER
from autotune.space.config import LoaderConfig

# The tuner is imported when a loader is made, not with this class. `autotune run` puts the class
# in place as soon as a process imports torch, and many such processes never make a loader: a
# spawned worker re-imports the script (and torch) only to run its dataset, a compiler's worker
# imports torch; each would pay the tuner's import (most of autotune's cost per process) for
# nothing.
if TYPE_CHECKING:
    from autotune.online.meter import Clock
    from autotune.online.options import OnlineOptions
    from autotune.online.policy import Policy
    from autotune.online.session import TunerState
    from autotune.recipe.model import Recipe

log = logging.getLogger("autotune")
# Read back as the configuration running now (frameworks re-create a loader from them).
RUNNING_KNOBS = ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")


def _running(name: str) -> property:
    def get(self: DataLoader) -> Any:
        session = self.__dict__.get("_session")
        return self.__dict__[f"_given_{name}"] if session is None else getattr(session.config, name)

    def put(self: DataLoader, value: Any) -> None:
        self.__dict__[f"_given_{name}"] = value

    return property(get, put, doc=f"`{name}` of the configuration running now.")


class DataLoader(TORCH_DATALOADER):
    num_workers = _running("num_workers")
    prefetch_factor = _running("prefetch_factor")
    persistent_workers = _running("persistent_workers")
    pin_memory = _running("pin_memory")

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Any = None,
        multiprocessing_context: Any = None,
        generator: torch.Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
        recipe: str | Path | Recipe | None = None,
        fixed: tuple[str, ...] | None = None,
        online: OnlineOptions | dict[str, Any] | None = None,
    ):
        super().__init__(
            dataset,
            batch_size,
            shuffle,
            sampler,
            batch_sampler,
            num_workers,
            collate_fn,
            pin_memory,
            drop_last,
            timeout,
            worker_init_fn,
            multiprocessing_context,
            generator,
            prefetch_factor=prefetch_factor,
            persistent_workers=persistent_workers,
            pin_memory_device=pin_memory_device,
            in_order=in_order,
        )
        from autotune.online.options import OnlineOptions, resolve
        from autotune.online.registry import base_name, call_site, evaluation_hint
        from autotune.online.setup import new_session

        given = (
            online.model_dump(exclude_unset=True)
            if isinstance(online, OnlineOptions)
            else dict(online or {})
        )
        if fixed is not None:
            given["fixed"] = fixed
        # Kept under the arguments' names: frameworks that re-create a loader from its attributes
        # (Lightning, HF) pass them back.
        self.online = resolve(given)
        self.fixed = self.online.fixed
        self._base_seed: int | None = None
        self._epochs = 0
        self._own_policy = False  # tune_with() gave one: the first epoch leaves it be
        site = call_site()
        self._evaluation_named = evaluation_hint(site.variable or site.role)
        self._evaluation = False  # decided when its first epoch starts (setup.epoch_starts)
        self._session = new_session(self, recipe, self.online.name or base_name(dataset, site))

    # -- what the user reads -----------------------------------------------------------------

    @property
    def recipe(self) -> Recipe | None:
        """The tuned configuration as the CLI's Recipe once exploring ended (or the recipe
        applied); None before, or with tuning off."""
        return self._session.recipe

    @property
    def tuner_state(self) -> TunerState:
        return self._session.state()

    @property
    def config(self) -> LoaderConfig:
        """The configuration running now."""
        return self._session.config

    def tune_with(self, policy: Policy, clock: Clock | None = None) -> None:
        """Replace the tuning policy (any object with Policy's methods, e.g. one that switches on
        a schedule) and, optionally, the meter's clock. Before the first iteration. With a clock
        of its own no backlog is read: the real workers' backlog against a fake clock's time
        would make rates of neither."""
        from autotune.online.meter import Meter

        self._own_policy = True
        self._session.policy = policy
        if clock is not None:
            self._session.meter = Meter(clock)
            self._session.ready = lambda _iterator: None

    def close(self) -> None:
        """Shut the inner loaders' workers down now (a running epoch's and a persistent
        configuration's kept ones), not when the garbage collector gets to them. The loader
        stays usable: the next epoch starts its workers again."""
        self._session.close()

    def write_results(self) -> Path | None:
        """Write the recipe and report now (they are written when exploring ends, and at exit)."""
        return self._session.outbox.write()

    # -- iteration -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:
        from autotune.online.epoch import OnlineEpoch
        from autotune.online.setup import epoch_starts

        s = self._session
        if isinstance(self.dataset, IterableDataset):
            return iter(s.inner_loader(s.policy.current, None))
        s.guard.call(s.outbox.arm)
        s.guard.call(epoch_starts, self, self._epochs)
        s.guard.call(s.epoch_starting)
        source = iter(self._index_sampler)  # torch's order: the sampler first, then the seed
        try:
            length: int | None = len(self)
        except TypeError:
            length = None
        seed = self._epoch_seed() + self._epochs  # distinct per epoch, also when drawn only once
        self._epochs += 1
        return OnlineEpoch(s, source, seed % 2**63, length)

    def _epoch_seed(self) -> int:
        """torch's draw of `_base_seed`: once per epoch, only once when persistent workers keep
        the first one (as torch's persistent iterator is reset, not rebuilt)."""
        given = self.__dict__
        if self._base_seed is None or not (
            given["_given_persistent_workers"] and given["_given_num_workers"] > 0
        ):
            draw = torch.empty((), dtype=torch.int64).random_(generator=self.generator)
            self._base_seed = int(draw.item())
        return self._base_seed

    def given(self) -> LoaderConfig:
        """The configuration the script's arguments make: what torch would run."""
        from autotune.online.climb_types import normal

        d = self.__dict__
        return normal(
            LoaderConfig(
                num_workers=d["_given_num_workers"],
                pin_memory=d["_given_pin_memory"],
                prefetch_factor=d["_given_prefetch_factor"],
                persistent_workers=d["_given_persistent_workers"],
            )
        )

    def cuda(self) -> bool:
        return torch.cuda.is_available() if self.online.cuda is None else self.online.cuda
