"""Issue #25's bench workloads: each builds from its spec and yields the batches its description
promises through a plain torch DataLoader (num_workers=0, two batches: no timing here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec, SimulatedDataset
from autotune.workload.spec import load_workload
from autotune.workload.text import Sentences, TextSpec, pad_collate
from benchmarks.workloads import BENCH_WORKLOADS

UNSEEN = {
    w.key: w
    for w in BENCH_WORKLOADS
    if w.key in ("heavy-tail", "large-numpy", "tiny-epochs", "collate-heavy", "tokenizer")
}


def _two_batches(spec: str) -> list:
    workload = load_workload(spec)
    loader = workload.make_loader(LoaderConfig())
    batches = []
    for batch in loader:
        batches.append(batch)
        if len(batches) == 2:
            return batches
    return batches


def test_all_five_are_in_the_full_run_and_one_is_held_out():
    assert len(UNSEEN) == 5 and all(w.default for w in UNSEEN.values())
    assert [k for k, w in UNSEEN.items() if w.held_out] == ["collate-heavy"]


def test_heavy_tail_items_wait_sixty_ms_one_in_forty():
    spec = SimSpec.parse(UNSEEN["heavy-tail"].spec.split(":", 1)[1])
    data = SimulatedDataset(
        spec.length,
        spec.cpu_ms,
        spec.io_ms,
        spec.shape,
        straggle_every=spec.straggle_every,
        straggle_x=spec.straggle_x,
    )
    waits = [data.io_seconds(i) for i in range(80)]
    assert waits.count(pytest.approx(0.060)) == 2 and waits.count(pytest.approx(0.0015)) == 78


def test_large_numpy_items_are_300_kib_float32_arrays_collated_to_tensors():
    spec = UNSEEN["large-numpy"].spec
    data = load_workload(spec).dataset
    item, _ = data[0]
    assert isinstance(item, np.ndarray) and item.dtype == np.float32 and item.nbytes == 300 * 1024
    x, y = _two_batches(spec)[0]
    assert x.shape == (32, 3, 160, 160) and x.dtype == torch.float32
    assert x.nbytes / 2**20 == pytest.approx(9.375)


def test_tiny_epochs_are_thirty_steps_with_a_costly_open():
    workload = load_workload(UNSEEN["tiny-epochs"].spec)
    assert len(workload.make_loader(LoaderConfig())) == 30
    assert workload.dataset.open_s == pytest.approx(0.4)


def test_the_collate_does_the_work_and_still_stacks():
    workload = load_workload(UNSEEN["collate-heavy"].spec)
    assert workload.collate_fn is not None and workload.collate_fn.seconds == pytest.approx(0.012)
    x, y = _two_batches(UNSEEN["collate-heavy"].spec)[1]
    assert x.shape == (32, 3, 32, 32) and y.shape == (32,)


def test_the_tokenizer_is_deterministic_and_pads_to_the_batch_longest():
    data = Sentences(TextSpec())
    assert data.sentence(3) == data.sentence(3) != data.sentence(4)
    ids, label = data[3]
    assert ids.dtype == torch.long and 0 < len(ids) <= 256 and (ids > 0).all()
    batch = pad_collate([data[0], data[1], data[2]])
    lengths = [len(data[i][0]) for i in range(3)]
    assert batch["input_ids"].shape == (3, max(lengths))
    assert batch["attention_mask"].sum(dim=1).tolist() == lengths
    first = _two_batches(UNSEEN["tokenizer"].spec)[0]
    assert set(first) == {"input_ids", "attention_mask", "labels"} and first["labels"].shape == (
        32,
    )
