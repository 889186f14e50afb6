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
import os
from pathlib import Path
from typing import Any, Iterator

import torch
from torch.utils.data import IterableDataset

from autotune.online.epoch import OnlineEpoch
from autotune.online.finish import Outbox
from autotune.online.inner import TORCH_DATALOADER, InnerLoaders
from autotune.online.meter import Clock, Meter
from autotune.online.options import OnlineOptions, resolve
from autotune.online.climb_types import TUNED, ClimbSettings, normal, with_value
from autotune.online.policy import FixedPolicy, HillClimb, Policy
from autotune.online.session import Session, TunerState
from autotune.online.worker_range import pool_memory
from autotune.online.workload import describe, differences
from autotune.recipe.model import Recipe, load_recipe
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus

log = logging.getLogger("autotune")

class DataLoader(TORCH_DATALOADER):  # type: ignore[misc, valid-type]
    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Any = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Any = None, multiprocessing_context: Any = None,
                 generator: torch.Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True,
                 recipe: str | Path | Recipe | None = None, fixed: tuple[str, ...] | None = None,
                 online: OnlineOptions | dict[str, Any] | None = None):
        super().__init__(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                         collate_fn, pin_memory, drop_last, timeout, worker_init_fn,
                         multiprocessing_context, generator, prefetch_factor=prefetch_factor,
                         persistent_workers=persistent_workers, pin_memory_device=pin_memory_device,
                         in_order=in_order)
        given = (online.model_dump(exclude_unset=True) if isinstance(online, OnlineOptions)
                 else dict(online or {}))
        if fixed is not None:
            given["fixed"] = fixed
        # Kept under the arguments' names: frameworks that re-create a loader from its attributes
        # (Lightning, HF) pass them back.
        self.online = resolve(given)
        self.fixed = self.online.fixed
        self._base_seed: int | None = None
        self._epochs = 0
        self._session = self._new_session(recipe)

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
        return self._session.policy.current

    def tune_with(self, policy: Policy, clock: Clock | None = None) -> None:
        """Replace the tuning policy (any object with Policy's methods, e.g. one that switches on
        a schedule) and, optionally, the meter's clock. Before the first iteration. With a clock
        of its own no backlog is read: the real workers' backlog against a fake clock's time
        would make rates of neither."""
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
        """Write the recipe and report now (they are written at exit otherwise)."""
        return self._session.outbox.write()

    # -- iteration -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        s = self._session
        if isinstance(self.dataset, IterableDataset):
            return iter(s.inner_loader(s.policy.current, None))
        s.outbox.arm()
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
        if self._base_seed is None or not (self.persistent_workers and self.num_workers > 0):
            draw = torch.empty((), dtype=torch.int64).random_(generator=self.generator)
            self._base_seed = int(draw.item())
        return self._base_seed

    # -- set-up ----------------------------------------------------------------------------------

    def _given(self) -> LoaderConfig:
        return normal(LoaderConfig(num_workers=self.num_workers, pin_memory=self.pin_memory,
                                   prefetch_factor=self.prefetch_factor,
                                   persistent_workers=self.persistent_workers))

    def _new_session(self, recipe: str | Path | Recipe | None) -> Session:
        opts = self.online
        name = opts.name or type(self.dataset).__name__
        rank = os.environ.get("RANK")
        workload = describe(self, name)
        start = self._given()
        policy: Policy | None = None
        applied: Recipe | None = None
        if recipe is not None:
            applied = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
            start = self._keep_fixed(applied.config)
            differs = differences(applied.workload, workload)
            if not differs:
                policy = FixedPolicy(start)
                log.info("autotune.DataLoader applies its recipe (%s), measured for this workload:"
                         " no tuning", start.label())
            else:
                applied = None
                log.info("autotune.DataLoader: the recipe was measured for another workload (%s);"
                         " tuning from its configuration %s", "; ".join(differs), start.label())
        if policy is None:
            policy = self._policy(start)
        session = Session(policy, InnerLoaders.of(self),
                          Outbox(None if rank not in (None, "0") else opts.results_dir, name),
                          workload, batch_size=workload["batch_size"] or 1,
                          device=torch.device("cuda" if self._cuda() else "cpu"))
        session.applied = applied
        return session

    def _keep_fixed(self, config: LoaderConfig) -> LoaderConfig:
        """`config` for the tuned knobs, the given values for the fixed ones."""
        given = self._given()
        out = given
        for name in TUNED:
            out = with_value(out, name, getattr(given if name in self.fixed else config, name))
        return out

    def _cuda(self) -> bool:
        return torch.cuda.is_available() if self.online.cuda is None else self.online.cuda

    def _policy(self, start: LoaderConfig) -> Policy:
        opts = self.online
        why = self._not_tunable()
        if why is not None:
            if opts.enabled:
                log.info("autotune.DataLoader does not tune online: %s", why)
            return FixedPolicy(start)
        try:
            epoch_steps: int | None = len(self)
        except TypeError:
            epoch_steps = None
        settings = ClimbSettings(epoch_steps=epoch_steps, usable_cpus=usable_cpus().count,
                                 cuda=self._cuda(), bound_share=opts.max_explore_share,
                                 min_horizon_steps=opts.max_explore_steps,
                                 max_workers=opts.max_workers,
                                 window_steps=opts.window_steps, window_s=opts.window_s,
                                 warmup_steps=opts.warmup_steps,
                                 min_windows=opts.min_windows,
                                 max_windows=opts.max_windows)
        return HillClimb(start, tuple(k for k in TUNED if k not in self.fixed), settings,
                         fits=pool_memory())

    def _not_tunable(self) -> str | None:
        if not self.online.enabled:
            return "tuning is off"
        if isinstance(self.dataset, IterableDataset):
            return ("an IterableDataset's stream cannot be split between configurations; it runs"
                    " the arguments given (or the recipe's) in every epoch")
        if not self.in_order:
            return ("in_order=False: batches arrive as they are ready, so a switch could not"
                    " resume the epoch exactly")
        return None
