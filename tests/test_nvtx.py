"""--nvtx with a fake NVTX module: the fetch patch, its ranges, and the originals restored."""

import pytest
from fakes import FakeNvtx
from torch.utils.data import DataLoader
from torch.utils.data._utils import fetch as torch_fetch

from autotune import tune
from autotune.profiling import nvtx as nvtx_mod
from autotune.profiling.nvtx import FETCHERS, fetch_ranges, nvtx_phases, range_cost
from autotune.workload.simulated import SimSpec, simulated_workload


def test_fetch_ranges_wrap_fetch_and_collate_then_restore_the_originals():
    fake = FakeNvtx()
    originals = {cls: cls.__dict__["fetch"] for cls in FETCHERS}
    with fetch_ranges(fake):
        assert torch_fetch._MapDatasetFetcher.fetch is not originals[torch_fetch._MapDatasetFetcher]
        batches = list(DataLoader(list(range(8)), batch_size=4))  # num_workers=0: in this process
    assert [b.tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert fake.pushed() == ["fetch", "collate", "fetch", "collate"]
    assert fake.depth == 0
    for cls, original in originals.items():
        assert cls.__dict__["fetch"] is original
    list(DataLoader(list(range(8)), batch_size=4))
    assert len(fake.events) == 8  # nothing more once unpatched


def test_fetch_ranges_restore_even_when_the_body_raises():
    original = torch_fetch._MapDatasetFetcher.__dict__["fetch"]
    with pytest.raises(RuntimeError), fetch_ranges(FakeNvtx()):
        raise RuntimeError("boom")
    assert torch_fetch._MapDatasetFetcher.__dict__["fetch"] is original


def test_phase_ranges_and_range_cost():
    fake = FakeNvtx()
    with nvtx_phases(fake)("copy"):
        pass
    assert fake.events == [("push", "copy"), ("pop", None)]
    cost = range_cost(fake, pairs=100)
    assert cost.range_us > 0 and cost.step_ranges == 3


def test_tune_with_nvtx_marks_every_phase_and_unpatches(monkeypatch, tmp_path):
    fake = FakeNvtx()
    monkeypatch.setattr("autotune.api.load_nvtx", lambda: fake)
    original = torch_fetch._MapDatasetFetcher.__dict__["fetch"]
    workload = simulated_workload(SimSpec.parse("cpu_ms=0.1,step_ms=2,batch=8,length=512"))
    result = tune(
        workload,
        max_trials=1,
        budget_s=30,
        nvtx=True,
        results_dir=tmp_path,
        burst={"min_steps": 4, "min_seconds": 0.3, "max_seconds": 0.6},
    )
    names = set(fake.pushed())
    # Trial 0 is PyTorch's defaults (num_workers=0): fetch and collate run in this process.
    assert {"wait", "copy", "compute", "fetch", "collate"} <= names
    assert torch_fetch._MapDatasetFetcher.__dict__["fetch"] is original
    assert (
        result.nvtx is not None and "NVTX ranges were emitted" in result.files["report"].read_text()
    )


def test_nvtx_unavailable_is_a_one_line_error(monkeypatch, tmp_path):
    from autotune.errors import OptionsError

    monkeypatch.setattr("autotune.api.load_nvtx", lambda: None)
    workload = simulated_workload(SimSpec.parse("length=512"))
    with pytest.raises(OptionsError, match="--nvtx"):
        tune(workload, max_trials=1, nvtx=True, results_dir=tmp_path)


def test_load_nvtx_returns_none_when_the_build_cannot_call_nvtx(monkeypatch):
    import torch.cuda.nvtx as torch_nvtx

    def broken(name):
        raise RuntimeError("NVTX functions not installed")

    monkeypatch.setattr(torch_nvtx, "range_push", broken)
    assert nvtx_mod.load_nvtx() is None
