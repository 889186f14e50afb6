"""Cheaper equivalents of a pipeline's stages, measured on this machine: never assumed to help.

One is measured where the dataset's transform ends in a tensor tail (ToTensor, Normalize and the
like): that tail per item, then the collate's stack, against uint8 per item (PILToTensor), the
stack, and the float conversion and Normalize once on the whole batch, as they would run on the
device. Both arms run here on the same items, in the main process, best of a few repeats; the
batch arm's result must equal the per-item arm's, or nothing is reported. On a GPU the batch part
leaves the CPU altogether, so the figure here is what it costs at most.

The other is measured only where the training runs on a CUDA device and a DatasetFolder
(ImageFolder) decodes JPEG files: its loader (open, decode, convert to RGB) per item against
reading the file's bytes and decoding the batch on the device with
`torchvision.io.decode_jpeg(device=...)` (nvJPEG), synchronized. The device's decode differs from
libjpeg's by rounding only, so the two arms' pixels must agree within `DECODE_TOLERANCE` on
average, or nothing is reported. The device arm's figure is its whole wall time, device time
included, as though decode then sat on the training's critical path: the workers' CPUs gain more.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import torch

from autotune.probe.fetch import best_of
from autotune.profiling.stages import LOAD as LOAD_STAGE
from autotune.profiling.stages import compose_types

TO_UINT8 = {"PILToTensor", "ToImage"}
TO_FLOAT = {"ToTensor", "ConvertImageDtype", "ToDtype"}
NORMALIZE = {"Normalize"}
TAIL = TO_UINT8 | TO_FLOAT | NORMALIZE | {"ToPureTensor"}
SAMPLE_ITEMS = 32
JPEG_SUFFIXES = (".jpg", ".jpeg")
# Mean absolute difference (of 255) allowed between libjpeg's and nvJPEG's pixels: their IDCT and
# chroma upsampling round differently; a wrong decode differs by tens.
DECODE_TOLERANCE = 3.0

# Decodes a batch of encoded JPEG bytes into uint8 CHW tensors (RGB) and returns once done.
BatchDecode = Callable[[list[torch.Tensor]], list[torch.Tensor]]


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
        return (
            100 * (1 - self.after_ms_per_item / self.before_ms_per_item)
            if self.before_ms_per_item
            else 0.0
        )

    @property
    def gain_text(self) -> str:
        """'48% less' (or 'more', where the equivalent turned out dearer)."""
        return f"{abs(self.gain_pct):.0f}% {'less' if self.gain_pct >= 0 else 'more'}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "replaces": self.replaces,
            "before_ms_per_item": round(self.before_ms_per_item, 4),
            "after_ms_per_item": round(self.after_ms_per_item, 4),
            "gain_pct": round(self.gain_pct, 1),
            "items": self.items,
            "detail": self.detail,
        }


def _holder(dataset: Any, holds: Callable[[Any], bool], depth: int = 0) -> Any | None:
    """`dataset`, or one it wraps under `.dataset` (Subset, a repeating or caching wrapper), for
    which `holds` is true."""
    if holds(dataset):
        return dataset
    inner = getattr(dataset, "dataset", None)
    return _holder(inner, holds, depth + 1) if inner is not None and depth < 4 else None


def _transform_holder(dataset: Any) -> Any | None:
    """The dataset (or one it wraps) whose `transform` is a Compose."""
    return _holder(dataset, lambda d: isinstance(getattr(d, "transform", None), compose_types()))


def _jpeg_folder(dataset: Any) -> Any | None:
    """The DatasetFolder (or one it wraps) that loads files through its `loader`."""
    from torchvision.datasets import DatasetFolder

    return _holder(
        dataset,
        lambda d: (
            isinstance(d, DatasetFolder)
            and callable(getattr(d, "loader", None))
            and bool(getattr(d, "samples", None))
        ),
    )


def _batch_tail(
    tail: list[Any],
) -> tuple[Callable[[Any], torch.Tensor], Callable[[torch.Tensor], torch.Tensor]] | None:
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
        "uint8 items, the batch converted and normalised at once",
        names,
        1000 * before_t.wall_s / n,
        1000 * after_t.wall_s / n,
        n,
        f"{' + '.join(names)} per item against PILToTensor per item and one"
        f" {'float conversion + ' if set(names) & TO_FLOAT else ''}"
        f"{'Normalize' if set(names) & NORMALIZE else ''} on the stacked batch (collate's stack"
        " included in both), measured on this machine's CPU; on the device the batch part leaves"
        " the workers' CPUs altogether and the batch crosses to it in uint8, 4x fewer bytes",
    )


def device_decode(device: torch.device) -> BatchDecode:
    """nvJPEG through torchvision, synchronized so that a timing holds the device's work."""
    from torchvision.io import ImageReadMode, decode_jpeg

    def run(data: list[torch.Tensor]) -> list[torch.Tensor]:
        out = decode_jpeg(data, mode=ImageReadMode.RGB, device=device)
        torch.cuda.synchronize(device)
        return list(out)

    return run


def decode_alternative(dataset: Any, decode: BatchDecode, where: str) -> Alternative | None:
    """The folder's loader per item against the file's bytes decoded by `decode` as a batch.
    `where` names the device in the report."""
    from torchvision.io import read_file
    from torchvision.transforms import functional as F

    folder = _jpeg_folder(dataset)
    if folder is None:
        return None
    paths = [path for path, _ in folder.samples if str(path).lower().endswith(JPEG_SUFFIXES)]
    paths = paths[:SAMPLE_ITEMS]
    if not paths:
        return None

    def before() -> list[Any]:
        return [folder.loader(path) for path in paths]

    def after() -> list[torch.Tensor]:
        return decode([read_file(str(path)) for path in paths])

    try:
        before_t, images = best_of(before)
        after_t, decoded = best_of(after)
    except (RuntimeError, OSError, ValueError):  # not a decodable JPEG there: nothing to offer
        return None
    for image, tensor in zip(images, decoded, strict=True):
        reference = F.pil_to_tensor(image) if not isinstance(image, torch.Tensor) else image
        got = tensor.cpu()
        if (
            got.shape != reference.shape
            or (got.float() - reference.float()).abs().mean() > DECODE_TOLERANCE
        ):
            return None
    n = len(paths)
    return Alternative(
        f"JPEG decode on the device (torchvision.io.decode_jpeg(device='{where}'))",
        [LOAD_STAGE],
        1000 * before_t.wall_s / n,
        1000 * after_t.wall_s / n,
        n,
        f"{type(folder).__name__}'s loader (read, decode, RGB) per item against the file's bytes"
        f" read here and the batch of {n} decoded on {where}, synchronized (device time"
        " included); the transforms after it must then take uint8 tensors on the device"
        " (torchvision.transforms.v2)",
    )


def measure_alternatives(
    dataset: Any, batch_size: int, device: torch.device | None = None
) -> list[Alternative]:
    """The cheaper equivalents that apply to `dataset`, each measured here (on `device` where it
    is a CUDA device)."""
    found = [_tail_to_batch(dataset, batch_size)]
    if device is not None and device.type == "cuda" and torch.cuda.is_available():
        found.append(decode_alternative(dataset, device_decode(device), str(device)))
    return [alt for alt in found if alt is not None]
