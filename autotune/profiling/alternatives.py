"""Cheaper equivalents of a pipeline's stages, measured on this machine: never assumed to help.

One is measured where the dataset's transform ends in a tensor tail (ToTensor, Normalize and the
like): that tail per item, then the collate's stack, against uint8 per item (PILToTensor), the
stack, and the float conversion and Normalize once on the whole batch, as they would run on the
device. Both arms run here on the same items, in the main process, best of a few repeats; the
batch arm's result must equal the per-item arm's, or nothing is reported. On a GPU the batch part
leaves the CPU altogether, so the figure here is what it costs at most.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import torch

from autotune.probe.fetch import best_of
from autotune.profiling.stages import compose_types

TO_UINT8 = {"PILToTensor", "ToImage"}
TO_FLOAT = {"ToTensor", "ConvertImageDtype", "ToDtype"}
NORMALIZE = {"Normalize"}
TAIL = TO_UINT8 | TO_FLOAT | NORMALIZE | {"ToPureTensor"}
SAMPLE_ITEMS = 32


@dataclass(frozen=True)
class Alternative:
    name: str
    replaces: list[str]  # the stages it stands in for
    before_ms_per_item: float
    after_ms_per_item: float
    items: int
    detail: str

    @property
    def gain_pct(self) -> float:
        return 100 * (1 - self.after_ms_per_item / self.before_ms_per_item) if self.before_ms_per_item else 0.0

    @property
    def gain_text(self) -> str:
        """'48% less' (or 'more', where the equivalent turned out dearer)."""
        return f"{abs(self.gain_pct):.0f}% {'less' if self.gain_pct >= 0 else 'more'}"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "replaces": self.replaces,
                "before_ms_per_item": round(self.before_ms_per_item, 4),
                "after_ms_per_item": round(self.after_ms_per_item, 4),
                "gain_pct": round(self.gain_pct, 1), "items": self.items, "detail": self.detail}


def _transform_holder(dataset: Any, depth: int = 0) -> Any | None:
    """The dataset (or one it wraps under `.dataset`) whose `transform` is a Compose."""
    if isinstance(getattr(dataset, "transform", None), compose_types()):
        return dataset
    inner = getattr(dataset, "dataset", None)
    return _transform_holder(inner, depth + 1) if inner is not None and depth < 4 else None


def _batch_tail(tail: list[Any]) -> tuple[Callable[[Any], torch.Tensor], Callable[[torch.Tensor], torch.Tensor]] | None:
    """(per item to uint8, batch op) equivalent to `tail`, or None when it is not a plain
    convert-and-normalize tail."""
    from torchvision.transforms import functional as F

    names = [type(t).__name__ for t in tail]
    if any(n not in TAIL for n in names) or not (set(names) & (TO_FLOAT | NORMALIZE)):
        return None
    norm = next((t for t in tail if type(t).__name__ in NORMALIZE), None)
    to_float = bool(set(names) & TO_FLOAT)

    def per_item(x: Any) -> torch.Tensor:
        return x if isinstance(x, torch.Tensor) else F.pil_to_tensor(x)

    def batch_op(b: torch.Tensor) -> torch.Tensor:
        if to_float and not b.is_floating_point():
            b = b.float().div_(255)
        if norm is not None:
            b = F.normalize(b, norm.mean, norm.std, inplace=True)
        return b

    return per_item, batch_op


def _tail_to_batch(dataset: Any, batch_size: int) -> Alternative | None:
    holder = _transform_holder(dataset)
    if holder is None:
        return None
    steps = list(holder.transform.transforms)
    cut = len(steps)
    while cut > 0 and type(steps[cut - 1]).__name__ in TAIL:
        cut -= 1
    tail = steps[cut:]
    ops = _batch_tail(tail)
    if ops is None:
        return None
    per_item, batch_op = ops
    probe = copy.copy(holder)  # the prefix's output is the tail's input; the user's dataset stays
    probe.transform = copy.copy(holder.transform)
    probe.transform.transforms = steps[:cut]
    n = min(SAMPLE_ITEMS, batch_size, len(holder))
    inputs = []
    for i in range(n):
        item = probe[i]
        inputs.append(item[0] if isinstance(item, (tuple, list)) else item)

    def before() -> torch.Tensor:
        out = []
        for x in inputs:
            for t in tail:
                x = t(x)
            out.append(x)
        return torch.stack(out)

    def after() -> torch.Tensor:
        return batch_op(torch.stack([per_item(x) for x in inputs]))

    try:
        before_t, want = best_of(before)
        after_t, got = best_of(after)
    except (RuntimeError, TypeError):  # items of different sizes do not stack: no batch to use
        return None
    if want.shape != got.shape or not torch.allclose(want, got, atol=1e-5):
        return None
    names = [type(t).__name__ for t in tail]
    return Alternative(
        "uint8 items, the batch converted and normalised at once", names, 1000 * before_t.wall_s / n,
        1000 * after_t.wall_s / n, n,
        f"{' + '.join(names)} per item against PILToTensor per item and one"
        f" {'float conversion + ' if set(names) & TO_FLOAT else ''}"
        f"{'Normalize' if set(names) & NORMALIZE else ''} on the stacked batch (collate's stack"
        " included in both), measured on this machine's CPU; on the device the batch part leaves"
        " the workers' CPUs altogether and the batch crosses to it in uint8, 4x fewer bytes")


def measure_alternatives(dataset: Any, batch_size: int) -> list[Alternative]:
    """The cheaper equivalents that apply to `dataset`, each measured here."""
    found = _tail_to_batch(dataset, batch_size)
    return [found] if found is not None else []
