"""Built-in workloads: `demo` (the default), `photos`, `imagefolder:PATH`, `fakedata`, `sim:...` and
`mem:...`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import torch
from torch.utils.data import Dataset

from autotune.errors import WorkloadError
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device
from autotune.workload.in_memory import MemSpec, in_memory_workload
from autotune.workload.jpegs import PHOTOS_SIDES, demo_folder, photos_folder
from autotune.workload.options import WorkloadOptions
from autotune.workload.simulated import SimSpec, SleepStep, simulated_workload
from autotune.workload.text import TextSpec, text_workload

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class Repeated(Dataset):
    """`dataset` seen `length` times in one epoch: a few hundred cached files stand in for a large
    dataset, so epoch boundaries (and worker restarts) come as rarely as they would for real."""

    def __init__(self, dataset: Any, length: int):
        self.dataset = dataset
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index % len(self.dataset)]


def train_transforms(image_size: int) -> Callable:
    """ImageNet-style training augmentation: decode happens in ImageFolder's loader."""
    from torchvision import transforms as T

    return T.Compose(
        [
            T.RandomResizedCrop(image_size, antialias=True),
            T.RandomHorizontalFlip(),
            T.ToTensor(),
            T.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )


def build_model(name: str, num_classes: int) -> torch.nn.Module:
    import torchvision

    try:
        return torchvision.models.get_model(name, weights=None, num_classes=num_classes)
    except (ValueError, KeyError):
        known = ", ".join(sorted(torchvision.models.list_models(torchvision.models))[:8])
        raise WorkloadError(
            f"unknown torchvision model {name!r} (for example: {known}, ...)"
        ) from None


def _image_workload(
    dataset: Any,
    num_classes: int,
    name: str,
    opts: WorkloadOptions,
    defaults: tuple[str, int, int],
    details: dict[str, Any],
) -> Workload:
    model_name, image_size, batch_size = defaults
    model = build_model(opts.model or model_name, num_classes)
    device = resolve_device(opts.device)
    workload = Workload.from_model(
        dataset,
        model,
        opts.batch_size or batch_size,
        device=device,
        name=name,
        amp=device.type == "cuda",
    )
    workload.details.update(details, image_size=opts.image_size or image_size)
    return workload


def _sizes(
    opts: WorkloadOptions, cpu: tuple[str, int, int], gpu: tuple[str, int, int]
) -> tuple[str, int, int]:
    return gpu if resolve_device(opts.device).type == "cuda" else cpu


def demo(arg: str | None, opts: WorkloadOptions) -> Workload:
    from torchvision.datasets import ImageFolder

    # On a CPU-only machine a small model at low resolution keeps a whole tuning near a minute;
    # with CUDA present it is the realistic case: ResNet-50 at 224 px.
    defaults = _sizes(opts, cpu=("mobilenet_v3_small", 64, 32), gpu=("resnet50", 224, 64))
    if resolve_device(opts.device).type == "cpu":
        # Without a GPU the model trains on one core, standing in for the accelerator; the other
        # cores are left to feed it, as on a GPU node. (With all cores, torch's OpenMP threads
        # and the workers would fight over the same cores.)
        torch.set_num_threads(1)
    folder = ImageFolder(
        str(demo_folder()), transform=train_transforms(opts.image_size or defaults[1])
    )
    dataset = Repeated(folder, 100 * len(folder))
    return _image_workload(
        dataset,
        len(folder.classes),
        "demo",
        opts,
        defaults,
        {"images": len(folder), "source": "generated JPEG folder"},
    )


# `photos` on a CPU-only machine: the step stands in for a GPU's, 30 ms of device time per batch
# that leaves the CPU to the loader (as a CUDA kernel does), so the decode-heavy loader is the
# bottleneck, as in a real GPU training on photos.
PHOTOS_STEP_S = 0.030


def photo_transforms(crop: int) -> Callable:
    """Unlike the demo's RandomResizedCrop: the shorter side resized to 9/8 of the crop, a random
    crop, a flip and colour jitter (brightness, contrast, saturation)."""
    from torchvision import transforms as T

    return T.Compose(
        [
            T.Resize(crop * 9 // 8, antialias=True),
            T.RandomCrop(crop),
            T.RandomHorizontalFlip(),
            T.ColorJitter(0.4, 0.4, 0.4),
            T.ToTensor(),
            T.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )


def photos(arg: str | None, opts: WorkloadOptions) -> Workload:
    """Camera-size JPEGs (1024-1600 px), resize + random crop + flip + colour jitter. With CUDA (or
    --model) a torchvision model trains on it; on a CPU-only machine without --model the step is an
    emulated accelerator (PHOTOS_STEP_S per batch, leaving the CPU free), so the CPUs only feed
    it."""
    from torchvision.datasets import ImageFolder

    device = resolve_device(opts.device)
    defaults = _sizes(opts, cpu=("resnet18", 128, 24), gpu=("resnet18", 176, 96))
    crop = opts.image_size or defaults[1]
    folder = ImageFolder(str(photos_folder()), transform=photo_transforms(crop))
    dataset = Repeated(folder, 100 * len(folder))
    details = {
        "images": len(folder),
        "source": f"generated camera-size JPEG folder ({PHOTOS_SIDES[0]}-{PHOTOS_SIDES[1]} px)",
        "augment": "resize, random crop, flip, colour jitter",
    }
    if device.type == "cpu":
        torch.set_num_threads(1)  # as for the demo: the main process is one core of the step
        if opts.model is None:
            step = SleepStep(PHOTOS_STEP_S)
            return Workload(
                dataset,
                opts.batch_size or defaults[2],
                step,
                name="photos",
                device=device,
                details={
                    **details,
                    "image_size": crop,
                    "step": f"emulated accelerator, {1000 * PHOTOS_STEP_S:g} ms per batch",
                },
            )
    return _image_workload(dataset, len(folder.classes), "photos", opts, defaults, details)


def imagefolder(arg: str | None, opts: WorkloadOptions) -> Workload:
    from torchvision.datasets import ImageFolder

    if not arg:
        raise WorkloadError(
            "imagefolder needs a path: imagefolder:PATH (a folder of class folders)"
        )
    root = Path(arg).expanduser()
    if not root.is_dir():
        raise WorkloadError(f"imagefolder: {root} is not a directory")
    defaults = _sizes(opts, cpu=("resnet18", 64, 32), gpu=("resnet50", 224, 64))
    try:
        dataset = ImageFolder(str(root), transform=train_transforms(opts.image_size or defaults[1]))
    except (FileNotFoundError, RuntimeError) as exc:
        raise WorkloadError(f"imagefolder: {exc}") from None
    return _image_workload(
        dataset,
        len(dataset.classes),
        f"imagefolder:{root.name}",
        opts,
        defaults,
        {"root": str(root)},
    )


def fakedata(arg: str | None, opts: WorkloadOptions) -> Workload:
    from torchvision import transforms as T
    from torchvision.datasets import FakeData

    defaults = _sizes(opts, cpu=("resnet18", 64, 32), gpu=("resnet50", 224, 64))
    size = opts.image_size or defaults[1]
    dataset = FakeData(
        size=int(arg) if arg else 4096,
        image_size=(3, size, size),
        num_classes=10,
        transform=T.Compose([T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]),
    )
    return _image_workload(dataset, 10, "fakedata", opts, defaults, {})


def sim(arg: str | None, opts: WorkloadOptions) -> Workload:
    spec = SimSpec.parse(arg)
    if opts.batch_size:
        spec = replace(spec, batch=opts.batch_size)
    return simulated_workload(spec)


def mem(arg: str | None, opts: WorkloadOptions) -> Workload:
    spec = MemSpec.parse(arg)
    if opts.batch_size:
        spec = replace(spec, batch=opts.batch_size)
    return in_memory_workload(spec)


def text(arg: str | None, opts: WorkloadOptions) -> Workload:
    spec = TextSpec.parse(arg)
    if opts.batch_size:
        spec = replace(spec, batch=opts.batch_size)
    return text_workload(spec)


BUILTINS: dict[str, Callable[[str | None, WorkloadOptions], Workload]] = {
    "demo": demo,
    "photos": photos,
    "imagefolder": imagefolder,
    "fakedata": fakedata,
    "sim": sim,
    "mem": mem,
    "text": text,
}
