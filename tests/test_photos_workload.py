"""The `photos` built-in: a second real JPEG pipeline for the bench (on a tiny generated folder)."""

from __future__ import annotations

import torch

from autotune.space.config import PYTORCH_DEFAULTS
from autotune.workload import builtin, jpegs
from autotune.workload.options import WorkloadOptions
from autotune.workload.simulated import SleepStep
from autotune.workload.spec import load_workload


def test_photos_is_a_real_jpeg_pipeline_with_its_own_sizes(tmp_path, monkeypatch):
    folder = jpegs.make_jpeg_folder(
        tmp_path / "photos", images=4, classes=2, min_side=64, max_side=96
    )
    monkeypatch.setattr(builtin, "photos_folder", lambda: folder)
    threads = torch.get_num_threads()
    try:
        work = load_workload("photos", WorkloadOptions(device="cpu"))
    finally:
        torch.set_num_threads(threads)
    assert work.name == "photos" and work.batch_size == 24
    assert isinstance(work.step, SleepStep)  # no GPU: an emulated accelerator leaves the CPU free
    details = work.describe()
    assert details["image_size"] == 128 and "colour jitter" in details["augment"]
    images, labels = next(iter(work.make_loader(PYTORCH_DEFAULTS)))
    assert images.shape == (24, 3, 128, 128) and labels.shape == (24,)
    small = load_workload("photos", WorkloadOptions(device="cpu", image_size=96, batch_size=8))
    torch.set_num_threads(threads)
    assert small.batch_size == 8 and small.describe()["image_size"] == 96
