"""The fetch probe (one batch per item against batched, in the main process), the in-memory
workload, and the advice drawn from them: timings come from a FakeClock, never the machine."""

from __future__ import annotations

import pytest
import torch
from fakes import burst
from search_fakes import cfg, trials
from timing_fakes import FakeClock
from torch.utils.data import Dataset, IterableDataset, TensorDataset

from autotune.diagnosis import Context, explain
from autotune.diagnosis.fetch_advice import bulk_line, main_process_line, ms_text
from autotune.errors import WorkloadError
from autotune.probe import fetch as fetch_module
from autotune.probe.ceilings import Ceilings
from autotune.probe.fetch import BatchedWay, FetchProbe, Timing, best_of, measure_fetch, same_batch
from autotune.probe.loader import LoaderProbe
from autotune.recipe.model import FetchRecord
from autotune.search.choose import choose, group
from autotune.search.confirm import to_confirm
from autotune.search.seeding import main_process_configs, seed_configs
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.base import Workload
from autotune.workload.in_memory import BulkTensorDataset, MemSpec, in_memory_workload
from autotune.workload.spec import load_workload

CPU_SPACE = SearchSpace(max_workers=8, cuda=False, channels_last_ok=False)


class Costed(Dataset):
    """Items that cost `item_s` of CPU each on a FakeClock; `__getitems__` (where `batch_s` is
    given) costs `batch_s` for the whole batch and returns the same items, or other ones."""

    def __init__(self, clock: FakeClock, item_s: float, length: int = 64, wait_s: float = 0.0):
        self.clock, self.item_s, self.length, self.wait_s = clock, item_s, length, wait_s

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        self.clock.burn(self.item_s)
        self.clock.sleep(self.wait_s)  # storage latency: wall time off the CPU
        return torch.tensor([float(index)]), index


class CostedBatches(Costed):
    def __init__(self, clock: FakeClock, item_s: float, batch_s: float, same: bool = True):
        super().__init__(clock, item_s)
        self.batch_s, self.same = batch_s, same

    def __getitems__(self, indices):
        self.clock.burn(self.batch_s)
        return [(torch.tensor([float(i if self.same else -i)]), i) for i in indices]


def _workload(dataset, batch_size: int = 16) -> Workload:
    return Workload(dataset, batch_size, lambda batch: None)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    return FakeClock().install(monkeypatch, fetch_module)


def test_getitems_is_measured_against_per_item_fetching_on_the_same_batch(clock):
    probe = measure_fetch(_workload(CostedBatches(clock, item_s=1e-3, batch_s=2e-3)))
    assert probe.batched_way == BatchedWay.GETITEMS and probe.items == 16
    assert probe.ms_per_item(probe.per_item) == pytest.approx(1.0)
    assert probe.ms_per_item(probe.batched) == pytest.approx(0.125)  # 2 ms for 16 items
    assert probe.per_item_overhead_ms == pytest.approx(0.875)
    assert probe.per_item_dominates
    assert probe.used is probe.batched  # torch's fetcher calls __getitems__ when it exists
    assert probe.fetch_ms_per_batch == pytest.approx(2.0)
    assert not probe.in_memory  # 0.125 ms per item is more than memory access


def test_getitems_items_that_differ_from_getitem_leave_no_comparison(clock):
    probe = measure_fetch(_workload(CostedBatches(clock, item_s=1e-3, batch_s=2e-3, same=False)))
    assert probe.per_item is None and probe.per_item_share is None
    assert probe.batched_way == BatchedWay.GETITEMS  # the dataset's own way is still the one used
    assert bulk_line(probe) is None


def test_a_dataset_without_a_batched_way_is_measured_per_item_only(clock):
    probe = measure_fetch(_workload(Costed(clock, item_s=2e-3)))
    assert probe.batched is None and probe.batched_way is None
    assert probe.fetch_ms_per_batch == pytest.approx(32.0)
    assert bulk_line(probe) is None


def test_slow_items_without_a_batched_way_are_not_probed_further(clock):
    assert measure_fetch(_workload(Costed(clock, item_s=10e-3))) is None
    assert clock.now == pytest.approx(10e-3)  # one item fetched, not a batch
    probe = measure_fetch(_workload(CostedBatches(clock, item_s=10e-3, batch_s=20e-3)))
    assert probe is not None and probe.per_item_dominates  # a batched way: compared however slow


def test_in_memory_means_microseconds_on_a_cpu_not_waiting(clock):
    assert measure_fetch(_workload(Costed(clock, item_s=10e-6))).in_memory
    # As fast, but mostly waiting (a cache on a network filesystem): not memory.
    assert not measure_fetch(_workload(Costed(clock, item_s=2e-6, wait_s=8e-6))).in_memory
    assert not measure_fetch(_workload(Costed(clock, item_s=1e-3))).in_memory


def test_tensor_dataset_is_compared_with_indexing_its_tensors_by_the_batch():
    dataset = TensorDataset(torch.arange(64.0).reshape(32, 2), torch.arange(32))
    probe = measure_fetch(_workload(dataset, 8))
    assert probe.batched_way == BatchedWay.SLICING and probe.batched is not None
    assert probe.per_item is not None
    assert probe.used is probe.per_item  # the DataLoader fetches a TensorDataset per item


def test_a_random_split_of_a_tensor_dataset_is_looked_through():
    from torch.utils.data import random_split

    dataset = TensorDataset(torch.arange(64.0).reshape(32, 2), torch.arange(32))
    train, _ = random_split(dataset, [24, 8], generator=torch.Generator().manual_seed(0))
    probe = measure_fetch(_workload(train, 8))
    # Subset.__getitems__ fetches per item: the batched way is the tensors indexed by the mapped
    # indices, and it must give the same batch (the probe drops it otherwise).
    assert probe.batched_way == BatchedWay.SLICING and probe.batched is not None
    assert probe.used is probe.per_item
    bulk = BulkTensorDataset(*dataset.tensors)  # a Subset of it fetches with its __getitems__
    assert (
        measure_fetch(_workload(random_split(bulk, [24, 8])[0], 8)).batched_way
        == BatchedWay.GETITEMS
    )


def test_bulk_tensor_dataset_has_getitems_giving_the_per_item_batch():
    dataset = BulkTensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))
    items = dataset.__getitems__([4, 1])
    assert same_batch(items, [dataset[4], dataset[1]])
    assert measure_fetch(_workload(dataset, 4)).batched_way == BatchedWay.GETITEMS


def test_nothing_to_fetch_by_index_in_an_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            yield from range(8)

    assert measure_fetch(Workload(Stream(), 4, lambda batch: None)) is None


def test_same_batch_compares_every_tensor_and_value():
    a = [torch.ones(2), (torch.zeros(1), 3)]
    assert same_batch(a, (torch.ones(2), [torch.zeros(1), 3]))  # tuples and lists alike
    assert not same_batch(a, [torch.ones(2), (torch.zeros(1), 4)])
    assert not same_batch(a, [torch.ones(2), (torch.ones(1), 3)])
    assert not same_batch(a, [torch.ones(2)])


def test_best_of_keeps_the_fastest_and_stops_when_its_time_is_spent(monkeypatch):
    clock = FakeClock().install(monkeypatch, fetch_module)
    costs = iter([0.3, 0.1, 0.2, 0.05])
    timing, out = best_of(lambda: clock.burn(next(costs)) or "done", repeats=4, max_s=0.5)
    assert timing.wall_s == pytest.approx(0.1) and timing.cpu_s == pytest.approx(0.1)
    assert out == "done" and next(costs) == 0.05  # the third run reached 0.6 s: no fourth
    costs = iter([1e-3] * 1000)
    calls = []
    best_of(lambda: calls.append(clock.burn(next(costs))), repeats=3, min_s=0.01)
    assert len(calls) == 10  # repeated until 10 ms had been spent


def _probe(
    per_item_ms: float,
    batched_ms: float | None = None,
    way: BatchedWay | None = None,
    receive: float | None = None,
    items: int = 100,
    on_cpu: float = 1.0,
) -> FetchProbe:
    def timing(ms):
        return None if ms is None else Timing(ms * items / 1000, on_cpu * ms * items / 1000)

    return FetchProbe(items, timing(per_item_ms), timing(batched_ms), way, receive)


def test_workers_cannot_pay_when_receiving_costs_at_least_the_fetch():
    assert _probe(0.004, receive=0.5).workers_cannot_pay  # 0.4 ms to fetch, 0.5 to receive
    assert not _probe(0.004, receive=0.3).workers_cannot_pay
    assert not _probe(0.004).workers_cannot_pay  # never measured: no claim


def test_main_process_line_gives_fetch_and_receive_costs_and_the_scaling():
    line = main_process_line(_probe(0.004, receive=0.5), "0 workers 900/s, 1 workers 800/s")
    assert line.startswith("num_workers=0 because the items come from memory")
    assert "fetching a batch of 100 in the training process takes 0.40 ms (4 us per item" in line
    assert "receiving one from a worker takes it 0.50 ms" in line
    assert "a worker cannot make loading cheaper" in line
    assert line.endswith("measured: 0 workers 900/s, 1 workers 800/s")
    saving = main_process_line(_probe(0.004, receive=0.3), "")
    assert "a worker saves it at most 0.10 ms a batch (25%)" in saving
    assert main_process_line(_probe(1.0, receive=0.5), "") is None  # neither in memory nor cheaper


def test_bulk_line_recommends_batched_fetching_only_where_per_item_calls_dominate():
    line = bulk_line(_probe(0.004, 0.0002, BatchedWay.SLICING))
    assert line.startswith("measured here: per-item calls take 95% of fetching a batch")
    assert "4 us per item one by one" in line and "against 0.2 us" in line
    assert "BatchSampler" in line and "__getitems__" in line
    assert bulk_line(_probe(0.004, 0.003, BatchedWay.SLICING)) is None  # 25%: not dominant
    kept = bulk_line(_probe(0.004, 0.001, BatchedWay.GETITEMS))
    assert "the dataset's __getitems__ saves 75% of a per-item fetch" in kept and "keep it" in kept
    dearer = bulk_line(_probe(0.004, 0.006, BatchedWay.GETITEMS))
    assert "costs 50% more than fetching per item" in dearer and "remove it" in dearer


def test_ms_text_switches_to_microseconds_below_a_tenth_of_a_millisecond():
    assert (
        ms_text(9.682) == "9.68 ms" and ms_text(0.0537) == "54 us" and ms_text(0.0023) == "2.3 us"
    )


def test_w0_tuned_on_an_in_memory_dataset_says_why_instead_of_asking_for_workers():
    fetch = _probe(0.004, 0.0002, BatchedWay.SLICING, receive=0.5)
    measured = trials((cfg(0), 1000.0), (cfg(1), 900.0), (cfg(2), 880.0))
    result = burst(config=PYTORCH_DEFAULTS, wait=0.3, compute=0.7, rate=1000.0)
    advice = explain(result, measured, Context(usable_cpus=2, fetch=fetch)).recommendations
    assert not any("use worker processes" in line for line in advice)
    assert any(
        line.startswith("num_workers=0 because the items come from memory") for line in advice
    )
    assert any(line.startswith("measured here: per-item calls take 95%") for line in advice)
    # Where workers did measure faster, the defaults' advice still asks for them.
    faster = trials((cfg(0), 500.0), (cfg(2), 1000.0))
    slow = burst(config=PYTORCH_DEFAULTS, wait=0.5, compute=0.5, rate=500.0)
    advice = explain(slow, faster, Context(usable_cpus=2, fetch=fetch)).recommendations
    assert any("use worker processes" in line for line in advice)
    assert not any(line.startswith("num_workers=0 because") for line in advice)


def test_workers_count_as_faster_by_their_mean_not_their_luckiest_burst():
    from autotune.diagnosis.effects import mean_rate_by_workers, workers_measured_faster

    measured = trials(
        (cfg(0), 1000.0),
        (cfg(0), 1000.0),
        (cfg(2), 1100.0),
        (cfg(2), 950.0),
        (cfg(2), 960.0),
        (cfg(3), 990.0),
    )
    assert mean_rate_by_workers(measured) == {
        0: 1000.0,
        2: pytest.approx(1003.33, abs=0.01),
        3: 990.0,
    }
    assert workers_measured_faster(measured, 0.03) is False
    assert workers_measured_faster(measured + trials((cfg(4), 1040.0)), 0.03) is True
    assert workers_measured_faster(trials((cfg(0), 1000.0)), 0.03) is None
    assert workers_measured_faster(trials((cfg(2), 1000.0)), 0.03) is None


def _ceilings(fetch: FetchProbe | None) -> Ceilings:
    from test_search_probes import _device_probe

    ceilings = Ceilings((_device_probe(False),), usable_cpus=2, fetched=fetch)
    ceilings.add(LoaderProbe(1, 1000.0, 1.0, 1000, 1.2, 0.3, receive_ms_per_batch=0.6))
    return ceilings


def test_the_one_worker_probe_supplies_the_receive_cost():
    assert _ceilings(_probe(0.004)).fetch.receive_ms_per_batch == pytest.approx(0.6)
    assert _ceilings(None).fetch is None


def test_num_workers_0_is_seeded_and_always_remeasured_where_items_come_from_memory():
    in_memory = _ceilings(_probe(0.004))
    assert main_process_configs(in_memory, CPU_SPACE) == [PYTORCH_DEFAULTS]
    assert main_process_configs(_ceilings(_probe(1.0)), CPU_SPACE) == []  # 0.6 ms < 100 ms fetch
    cuda = SearchSpace(max_workers=8, cuda=True, channels_last_ok=False)
    pinned = LoaderConfig(num_workers=0, pin_memory=True, non_blocking=True)
    assert pinned in seed_configs(in_memory, cuda)
    assert pinned not in seed_configs(_ceilings(_probe(1.0)), cuda)
    # w0's one burst read 15% low: still re-measured, as the band alone would not.
    measured = group(trials((cfg(0), 850.0), (cfg(2), 1000.0), (cfg(3), 990.0), (cfg(4), 980.0)))
    assert cfg(0) not in to_confirm(measured, CPU_SPACE)
    assert to_confirm(measured, CPU_SPACE, always=[PYTORCH_DEFAULTS])[-1] == cfg(0)


def test_the_choice_lands_on_w0_when_workers_do_not_beat_it_beyond_noise():
    measured = trials((cfg(0), 1000.0), (cfg(0), 1010.0), (cfg(2), 1015.0), (cfg(2), 1005.0))
    assert choose(group(measured)).chosen.config == PYTORCH_DEFAULTS


def test_the_fetch_record_round_trips_through_the_recipe_model():
    record = FetchRecord.model_validate(_probe(0.004, 0.0002, BatchedWay.SLICING, 0.5).as_dict())
    assert record.batched_way == BatchedWay.SLICING and record.workers_cannot_pay
    assert record.per_item_share_pct == pytest.approx(95.0)
    assert FetchRecord.model_validate_json(record.model_dump_json()) == record


def test_the_report_shows_both_ways_and_the_receive_cost():
    from autotune.report.summary import fetch_section

    record = FetchRecord.model_validate(_probe(0.004, 0.0002, BatchedWay.SLICING, 0.5).as_dict())
    text = "\n".join(fetch_section(record))
    assert "| per item (`__getitem__`, then the collate_fn) | 4 us |" in text
    assert "| batched (tensor indexing) | 0.2 us |" in text
    assert "fetch itself; receiving one from a worker costs it 0.50 ms" in text
    assert "num_workers=0 was measured and re-measured" in text
    assert fetch_section(None) == []


def test_the_bench_runs_an_in_memory_workload():
    from benchmarks.workloads import select

    bench = next(w for w in select(None, quick=False) if w.key == "in-memory")
    workload = load_workload(bench.spec)
    assert isinstance(workload.dataset, TensorDataset) and workload.batch_size == 256


def test_mem_spec_builds_a_tensor_dataset_and_bad_input_is_one_clear_line():
    workload = load_workload("mem:batch=8,shape=4,length=64,bulk=1,step_ms=0")
    assert isinstance(workload.dataset, BulkTensorDataset) and workload.batch_size == 8
    assert workload.dataset[3][0].shape == (4,) and len(workload.dataset) == 64
    assert MemSpec.parse("shape=3x8x8").shape == (3, 8, 8)
    assert in_memory_workload(MemSpec(length=32, batch=8)).details["in_memory"]["bulk"] is False
    with pytest.raises(WorkloadError, match="bad mem parameter 'depth=2': use key=value with keys"):
        MemSpec.parse("depth=2")
    with pytest.raises(WorkloadError, match="bad value for mem parameter bulk: 'yes'"):
        MemSpec.parse("bulk=yes")
