"""Facts about where a tuning ran, for `autotune env` and the recipe's environment block."""

from __future__ import annotations

import os
import platform
import socket
from importlib import metadata
from typing import Any

import torch

from autotune.slurm_env import job_identity
from autotune.space.cpus import usable_cpus
from autotune.telemetry.nvml import list_gpus
from autotune.telemetry.shm import SMALL_SHM_MIB, shm_space

SLURM_VARIABLES = (
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_CPUS_PER_TASK",
    "SLURM_CPUS_ON_NODE",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE",
    "SLURM_GPUS_ON_NODE",
    "SLURM_JOB_NODELIST",
    "SLURMD_NODENAME",
)
TORCHRUN_VARIABLES = ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK", "WORLD_SIZE")


def gpu_name(device: torch.device) -> str | None:
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_name(device)


def collect(device: torch.device | None = None, ranks: int | None = None) -> dict[str, Any]:
    """Where a measurement holds: kept with every trial and in the recipe. `ranks`: the ranks per
    node it was measured under (default: as the environment says)."""
    cpus = usable_cpus(ranks=ranks)
    device = device or torch.device("cpu")
    return {
        "usable_cpus": cpus.count,
        "cpu_source": cpus.source,
        "cpu_budget": cpus.describe(),
        "ranks_per_node": cpus.ranks,
        "device": str(device),
        "gpu": gpu_name(device),
        "hostname": socket.gethostname(),
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "torchvision": _version("torchvision"),
        "cuda": torch.version.cuda if torch.cuda.is_available() else None,
        **job_identity(os.environ),
    }


def _version(package: str) -> str | None:
    """An installed package's version from its metadata: no import (torchvision's costs seconds,
    and the online loader writes its recipe from inside a training step)."""
    try:
        return metadata.version(package).split("+")[0]
    except metadata.PackageNotFoundError:
        return None


def describe(ranks: int | None = None) -> dict[str, Any]:
    """Everything `autotune env` shows."""
    cpus = usable_cpus(ranks=ranks)
    return {
        "usable_cpus": cpus.summary(),
        "cpu budget derived from": "\n".join(cpus.derivation),
        "os.cpu_count (not used)": os.cpu_count(),
        "torch": torch.__version__,
        "cuda available": torch.cuda.is_available(),
        "cuda version": torch.version.cuda,
        "torch cuda devices": [
            torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())
        ]
        if torch.cuda.is_available()
        else [],
        "nvml gpus": list_gpus() or "NVML unavailable (no NVIDIA driver): GPU telemetry off",
        "slurm": {k: os.environ[k] for k in SLURM_VARIABLES if k in os.environ}
        or "not under Slurm",
        "torchrun": {k: os.environ[k] for k in TORCHRUN_VARIABLES if k in os.environ}
        or "not under torchrun",
        "/dev/shm": _shm_text(),
    }


def _shm_text() -> str:
    space = shm_space()
    if space is None:
        return "none (workers pass batches another way on this OS)"
    return f"{space.total_mib:.0f} MiB, {space.free_mib:.0f} MiB free"


def warnings() -> list[str]:
    """What will hold a DataLoader back on this machine, in one line each."""
    out = []
    space = shm_space()
    if space is not None and space.small:
        out.append(
            f"/dev/shm is only {space.total_mib:.0f} MiB (under {SMALL_SHM_MIB} MiB): DataLoader"
            " workers pass batches through it and die with a bus error when it fills; in"
            " Docker raise it with --shm-size (the default is 64 MiB). autotune skips"
            " configurations whose batches in flight do not fit."
        )
    return out
