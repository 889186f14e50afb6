"""autotune.DataLoader on a real GPU: switching configuration mid-epoch keeps torch's batches with
pinned memory in play, and the online tuner measures pin_memory where CUDA is used.

Marked `gpu`: skipped where no CUDA device is present (CI, the dev machine); test_online_stream.py
and test_online_policy.py cover the same logic on the CPU with fakes.
"""

from __future__ import annotations

import pytest
import torch
from online_fakes import Indices, SwitchEvery, _nothing_written_at_exit, as_lists  # noqa: F401
from torch import nn
from torch.utils.data import DataLoader, Dataset

import autotune
from autotune.space.config import LoaderConfig

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

PINNED = (
    LoaderConfig(pin_memory=True),
    LoaderConfig(num_workers=2, prefetch_factor=2, pin_memory=True),
    LoaderConfig(num_workers=1, prefetch_factor=1, pin_memory=True),
    LoaderConfig(num_workers=2, prefetch_factor=1, persistent_workers=True, pin_memory=True),
)


def test_switches_between_pinned_configurations_keep_torchs_batches_on_the_gpu():
    def kwargs():
        return dict(
            dataset=Indices(64),
            batch_size=4,
            shuffle=True,
            generator=torch.Generator().manual_seed(5),
        )

    expected = as_lists(DataLoader(**kwargs()))
    loader = autotune.DataLoader(**kwargs())
    loader.tune_with(SwitchEvery(3, configs=PINNED))
    got = []
    for batch in loader:
        assert batch.is_pinned()  # every configuration pins, through every switch
        got.append(batch.to("cuda", non_blocking=True).cpu().tolist())
    assert got == expected


class Noise(Dataset):
    """Items with a little CPU work each, so workers and pinning have something to do."""

    def __len__(self) -> int:
        return 4096

    def __getitem__(self, i: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, 64, 64, generator=g)


def test_the_online_tuner_measures_pin_memory_on_cuda():
    # Only pin_memory is left to tune: its candidate is measured once the start is.
    loader = autotune.DataLoader(
        Noise(),
        batch_size=32,
        shuffle=True,
        num_workers=2,
        fixed=("num_workers", "prefetch_factor", "persistent_workers"),
        online={"results_dir": None, "cuda": True, "window_steps": 4, "window_s": 0.0},
    )
    model = nn.Conv2d(3, 16, 3).cuda()
    for _ in range(3):  # the recipe is made once the switch to the choice has settled
        for batch in loader:
            model(batch.cuda(non_blocking=True)).sum().backward()
        if loader.recipe is not None:
            break
    state = loader.tuner_state
    assert not state.exploring, state
    assert any("pin" in label for label in state.measured), state.measured
    assert loader.recipe is not None and loader.recipe.config.num_workers == 2
