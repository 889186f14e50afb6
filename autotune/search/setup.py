"""What a tuning settles before its first burst: one batch of the workload (its layout and size in
bytes), the search space that batch opens, and the study the trials go to.

A study that already holds trials is continued (`--resume`, or a study shared by several
processes), so it must have been measured on the same workload and device: trials are only
comparable there.
"""

from __future__ import annotations

import json
import os
from typing import Any

import optuna
import torch

from autotune.burst.watchdog import time_limit
from autotune.decision.worker_range import worker_top
from autotune.errors import AutotuneError, OptionsError, WorkloadError
from autotune.search.options import TuneOptions
from autotune.search.pruning import BehindBestPruner
from autotune.search.study import STUDY_DEVICE, STUDY_WORKLOAD, describe_study, open_study
from autotune.slurm_env import process_slot
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace
from autotune.telemetry.host import MIB
from autotune.transfer.move import is_image_batch, iter_tensors
from autotune.workload.base import Workload


def probe_batch(workload: Workload, limit_s: float | None = None) -> Any:
    """One batch through the plain loader: shows the input layout and the batch size in bytes.
    None if loading it fails or hangs: the trials then show how, and a workload that fails in
    every configuration is reported as broken with its traceback."""
    try:
        with time_limit(limit_s, "loading the probe batch"):
            return next(iter(workload.make_loader(PYTORCH_DEFAULTS)))
    except StopIteration:
        raise WorkloadError(
            f"workload '{workload.name}' yields no batch: the dataset is smaller than one batch"
        ) from None
    except AutotuneError:
        raise
    except Exception:
        return None


def batch_mib(batch: Any) -> float:
    return sum(t.nbytes for t in iter_tensors(batch)) / MIB


def build_space(
    batch: Any,
    device: torch.device,
    max_workers: int | None,
    cpus: int | None = None,
    knobs: tuple[str, ...] = (),
) -> SearchSpace:
    """`knobs`: the opt-in knobs the user asked to search as well."""
    first = next(iter_tensors(batch), None)
    cpus = usable_cpus().count if cpus is None else cpus
    top, _ = worker_top(cpus, max_workers)
    return SearchSpace(
        max_workers=top,
        cuda=device.type == "cuda",
        channels_last_ok=first is not None and is_image_batch(first),
        opted_in=frozenset(knobs),
    )


def tuning_study(
    options: TuneOptions,
    workload: dict[str, Any],
    device: str,
    sampler: optuna.samplers.BaseSampler | None = None,
    pruner: optuna.pruners.BasePruner | None = None,
) -> optuna.Study:
    """The study this tuning writes to; by default a seeded TPE sampler and BehindBestPruner."""
    seed = options.seed
    if options.study_name is not None and seed is not None:
        # Processes joining one study must not all propose the same points in the same order.
        seed += process_slot(os.environ)
    study = open_study(
        seed=seed,
        storage=options.storage,
        study_name=options.study_name,
        sampler=sampler,
        pruner=pruner if pruner is not None else BehindBestPruner(),
    )
    if options.resume is not None:
        check_setup(study, workload, device)
    describe_study(study, workload, device)
    return study


def _flat(workload: dict[str, Any], device: str) -> dict[str, Any]:
    """As the study stores it (JSON: tuples become lists), keyed so a mismatch can be named."""
    setup = {f"workload.{k}": v for k, v in workload.items()}
    setup["device"] = device
    return json.loads(json.dumps(setup, default=str))


def check_setup(study: optuna.Study, workload: dict[str, Any], device: str) -> None:
    """Trials are only comparable on one workload and device: refuse to continue a study that
    was measured on others."""
    if STUDY_WORKLOAD not in study.user_attrs:
        return
    stored = _flat(study.user_attrs[STUDY_WORKLOAD], study.user_attrs.get(STUDY_DEVICE, device))
    current = _flat(workload, device)
    for key in [*current, *(k for k in stored if k not in current)]:  # the workload name first
        if stored.get(key) != current.get(key):
            raise OptionsError(
                f"study '{study.study_name}' was measured with {key} {stored.get(key)},"
                f" not {current.get(key)}: resume it with the same workload and options"
            )
