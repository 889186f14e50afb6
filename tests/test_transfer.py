from collections import namedtuple

import pytest
import torch

from autotune.transfer import device_loader as dl
from autotune.transfer.device_loader import DeviceLoader
from autotune.transfer.move import iter_tensors, move_to_device

Pair = namedtuple("Pair", "image label")


def _nested():
    return {
        "a": (torch.ones(2, 3, 4, 4), [torch.zeros(2), "text"]),
        "b": Pair(torch.ones(2, 3, 4, 4), torch.arange(2)),
        "n": 5,
    }


def test_move_keeps_structure_and_types():
    out = move_to_device(_nested(), "cpu")
    assert isinstance(out, dict) and isinstance(out["a"], tuple) and isinstance(out["a"][1], list)
    assert isinstance(out["b"], Pair) and out["a"][1][1] == "text" and out["n"] == 5
    assert len(list(iter_tensors(out))) == 4


def test_channels_last_only_for_4d_float():
    out = move_to_device(_nested(), "cpu", channels_last=True)
    image = out["b"].image
    assert image.is_contiguous(memory_format=torch.channels_last) and not image.is_contiguous()
    assert out["b"].label.is_contiguous()  # 1-D labels untouched
    ints = move_to_device(torch.ones(2, 3, 4, 4, dtype=torch.uint8), "cpu", channels_last=True)
    assert ints.is_contiguous()


def test_non_blocking_and_device_reach_tensor_to(monkeypatch):
    calls = []
    real_to = torch.Tensor.to

    def spy(self, *args, **kwargs):
        calls.append((args, kwargs))
        return real_to(self, "cpu")

    monkeypatch.setattr(torch.Tensor, "to", spy)
    move_to_device([torch.ones(1), (torch.ones(1),)], "cpu", non_blocking=True)
    assert calls == [(("cpu",), {"non_blocking": True})] * 2


def test_cpu_loader_is_a_pass_through():
    batches = [(torch.full((2, 3, 4, 4), float(i)), torch.tensor([i, i])) for i in range(4)]
    out = list(DeviceLoader(batches, "cpu", side_stream_prefetch=True))
    assert [int(b[1][0]) for b in out] == [0, 1, 2, 3]
    assert DeviceLoader(batches, "cpu", side_stream_prefetch=True).stream is None


class FakeStream:
    """Stands in for torch.cuda.Stream: records the order of stream operations."""

    def __init__(self, log, name):
        self.log, self.name = log, name

    def wait_stream(self, other):
        self.log.append(f"{self.name} waits {other.name}")


def test_side_stream_prefetch_order_with_fake_cuda(monkeypatch):
    """Copy of batch i+1 is issued before batch i is handed over; the compute stream waits on
    the side stream after each hand-over and every tensor is record_stream'ed: the fake only
    checks that ordering, it does not prove anything runs on a real GPU."""
    log = []
    side, current = FakeStream(log, "side"), FakeStream(log, "current")
    created = []

    class StreamFactory:
        def __new__(cls, device):
            created.append(device)
            return side

    class StreamContext:
        def __init__(self, stream):
            self.stream = stream

        def __enter__(self):
            log.append(f"enter {self.stream.name}")

        def __exit__(self, *exc):
            log.append(f"exit {self.stream.name}")

    monkeypatch.setattr(dl.torch.cuda, "Stream", StreamFactory)
    monkeypatch.setattr(dl.torch.cuda, "stream", StreamContext)
    monkeypatch.setattr(dl.torch.cuda, "current_stream", lambda device=None: current)
    monkeypatch.setattr(
        dl, "move_to_device", lambda batch, *a: (log.append(f"copy {int(batch[0])}"), batch)[1]
    )
    monkeypatch.setattr(
        torch.Tensor,
        "record_stream",
        lambda self, stream: log.append(f"record {int(self[0])} on {stream.name}"),
        raising=False,
    )

    loader = DeviceLoader(
        [torch.tensor([i]) for i in range(3)], torch.device("cuda", 0), side_stream_prefetch=True
    )
    got = []
    for batch in loader:
        log.append(f"step {int(batch[0])}")
        got.append(int(batch[0]))
    assert got == [0, 1, 2]
    assert len(created) == 1  # one stream per loader, not per epoch
    list(loader)
    assert len(created) == 1
    first_epoch = log[: log.index("step 2") + 1]
    assert first_epoch == [
        "enter side",
        "copy 0",
        "exit side",
        "current waits side",
        "record 0 on current",
        "enter side",
        "copy 1",
        "exit side",
        "step 0",
        "current waits side",
        "record 1 on current",
        "enter side",
        "copy 2",
        "exit side",
        "step 1",
        "current waits side",
        "record 2 on current",
        "step 2",
    ]


@pytest.mark.gpu
def test_side_stream_prefetch_on_a_real_gpu():
    batches = [torch.full((4, 3, 8, 8), float(i)) for i in range(5)]
    out = [
        b.sum().item()
        for b in DeviceLoader(batches, "cuda", non_blocking=True, side_stream_prefetch=True)
    ]
    assert out == [float(i * 4 * 3 * 8 * 8) for i in range(5)]


def test_wrapped_loader_passes_sampler_dataset_batch_size_and_len_through():
    """A drop-in: under DistributedSampler, `recipe.wrap(loader).sampler.set_epoch(e)`
    reshuffles."""
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from autotune.recipe.model import Recipe
    from autotune.space.config import LoaderConfig

    dataset = TensorDataset(torch.arange(32).float())
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    recipe = Recipe.from_config(
        LoaderConfig(),
        measured={"samples_per_s": 1.0, "baseline_samples_per_s": 1.0, "speedup": 1.0},
        workload={},
        environment={},
    )
    wrapped = recipe.wrap(loader, "cpu")
    assert wrapped.sampler is sampler and wrapped.dataset is dataset
    assert wrapped.batch_sampler is loader.batch_sampler
    assert wrapped.batch_size == 4 and len(wrapped) == len(loader) == 4

    def epoch(e: int) -> list[float]:
        wrapped.sampler.set_epoch(e)
        return [x for (batch,) in wrapped for x in batch.tolist()]

    first, again, other = epoch(0), epoch(0), epoch(1)
    assert sampler.epoch == 1 and first == again and first != other
    assert len(first) == len(other) == len(set(first)) == 16  # this rank's half of each epoch
