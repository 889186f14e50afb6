"""A generated JPEG ImageFolder, made once and cached on disk (no downloads at run time)."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

from autotune.run_paths import cache_root

DEMO_VERSION = "v2"


def _image(rng: random.Random, size: tuple[int, int]) -> Image.Image:
    """Gradients, shapes and blur: content a JPEG decoder has real work on (not flat colour)."""
    w, h = size
    img = Image.linear_gradient("L").resize(size).convert("RGB")
    channels = img.split()
    scales = [rng.random() for _ in channels]  # drawn in channel order, as before
    img = Image.merge(
        "RGB", [ch.point(lambda v, k=k: int(v * k)) for ch, k in zip(channels, scales, strict=True)]
    )
    draw = ImageDraw.Draw(img)
    for _ in range(rng.randint(8, 20)):
        x0, y0 = rng.randrange(w), rng.randrange(h)
        x1, y1 = x0 + rng.randint(10, w // 2), y0 + rng.randint(10, h // 2)
        colour = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour)
    noise = Image.effect_noise(size, rng.uniform(20, 60)).convert("RGB")
    img = Image.blend(img, noise, 0.25)
    return img.filter(ImageFilter.SMOOTH) if rng.random() < 0.5 else img


def make_jpeg_folder(
    root: Path,
    *,
    images: int = 256,
    classes: int = 4,
    seed: int = 0,
    min_side: int = 384,
    max_side: int = 768,
    quality: int = 90,
) -> Path:
    """Write `images` JPEGs into `classes` subfolders of `root`, unless they are already there."""
    marker = root / ".complete"
    if marker.exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    rng = random.Random(seed)
    for i in range(images):
        folder = tmp / f"class_{i % classes}"
        folder.mkdir(exist_ok=True)
        size = (rng.randint(min_side, max_side), rng.randint(min_side, max_side))
        _image(rng, size).save(folder / f"img_{i:05d}.jpg", quality=quality)
    (tmp / ".complete").write_text(f"{images} images\n")
    try:
        tmp.rename(root)  # atomic: concurrent makers race, one wins, the others clean up
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def demo_folder() -> Path:
    return make_jpeg_folder(cache_root() / f"demo-jpegs-{DEMO_VERSION}")


PHOTOS_VERSION = "v1"
PHOTOS_SIDES = (1024, 1600)  # camera-size sources: 2-4x the demo's pixels per image


def photos_folder() -> Path:
    """128 camera-size JPEGs (1024-1600 px a side) in 8 classes, for the `photos` workload."""
    low, high = PHOTOS_SIDES
    return make_jpeg_folder(
        cache_root() / f"photos-jpegs-{PHOTOS_VERSION}",
        images=128,
        classes=8,
        seed=1,
        min_side=low,
        max_side=high,
        quality=88,
    )
