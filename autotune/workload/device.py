"""Turning 'auto' / 'cpu' / 'cuda[:i]' into a torch.device that really exists here."""

from __future__ import annotations

import torch

from autotune.errors import OptionsError


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    if device is None or str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise OptionsError(f"unknown device {device!r}: use auto, cpu or cuda[:index]") from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise OptionsError(
                f"--device {device}: no CUDA GPU is available here; use --device cpu or auto"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise OptionsError(
                f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) present"
            )
    elif dev.type != "cpu":
        raise OptionsError(
            f"device type {dev.type!r} is not supported: use auto, cpu or cuda[:index]"
        )
    return dev


def device_for(built_for: torch.device | None, requested: str) -> torch.device:
    """The device to run a workload on: the one its step was built for, if it was (a request
    for another is refused), else the requested one."""
    if built_for is None:
        return resolve_device(requested)
    if requested != "auto" and resolve_device(requested) != built_for:
        raise OptionsError(
            f"--device {requested} differs from the device the workload's step was"
            f" built for ({built_for}); drop --device or rebuild the workload"
        )
    return built_for
