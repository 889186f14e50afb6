"""Per-stage timing inside the workers: the wrappers under fork and spawn, the recognised
structures, the table's arithmetic (made-up totals), the advice, the recipe record, and the
user's objects left as they were."""

import json

import pytest
import torch
from stage_fakes import AddOne, BatchedItems, Double, TensorItems

from autotune.burst.teardown import release_loader
from autotune.diagnosis.stage_advice import dominant_line, stage_record, with_stages
from autotune.profiling.alternatives import Alternative, decode_alternative, measure_alternatives
from autotune.profiling.stage_recorder import read_totals, release
from autotune.profiling.stage_run import StageProfile, profile_stages
from autotune.profiling.stage_table import FETCH, OTHER_IN_GETITEM, stage_table
from autotune.profiling.stages import (
    COLLATE,
    GETITEM,
    LOAD,
    StageKind,
    StagePlan,
    TimedBatchDataset,
    timed_workload,
)
from autotune.recipe.model import DiagnosisRecord
from autotune.search.budget import Budget
from autotune.space.config import LoaderConfig
from autotune.workload.base import Workload
from autotune.workload.builtin import Repeated
from autotune.workload.jpegs import make_jpeg_folder

BATCH = 8


def _workload(dataset, batch=BATCH):
    return Workload(dataset, batch, step=lambda batch: None, shuffle=False)


def _time_all(workload, tmp_path, **loader_args):
    """Every batch of one epoch through the timed copy; the table of what the processes wrote."""
    timed, plan = timed_workload(workload, tmp_path)
    loader = timed.make_loader(
        LoaderConfig(
            num_workers=loader_args.pop("num_workers", 0),
            prefetch_factor=loader_args.pop("prefetch_factor", None),
        ),
        **loader_args,
    )
    batches = list(loader)
    release_loader(loader)
    release(str(tmp_path))
    totals, processes = read_totals(tmp_path)
    return batches, stage_table(plan, totals, processes)


def _names(table):
    return [r.name for r in table.rows]


@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
def test_wrappers_time_each_transform_in_forked_forkserver_and_spawned_workers(tmp_path, context):
    dataset = TensorItems(
        64, transform=__import__("torchvision").transforms.Compose([AddOne(), Double()])
    )
    batches, table = _time_all(
        _workload(dataset),
        tmp_path,
        num_workers=2,
        prefetch_factor=2,
        multiprocessing_context=context,
    )
    assert len(batches) == 64 // BATCH
    assert torch.equal(batches[1][0][0], (torch.full((4,), 8.0) + 1) * 2)  # same items as unwrapped
    assert _names(table) == ["AddOne", "Double", OTHER_IN_GETITEM, COLLATE]
    assert table.processes == 2
    assert table.items == 64 - 2 * BATCH  # each worker's first batch is its warm-up
    assert sum(r.share_pct for r in table.rows) == pytest.approx(100)


def test_a_users_own_dataset_gets_fetch_against_collate(tmp_path):
    batches, table = _time_all(
        _workload(TensorItems(48)),
        tmp_path,
        num_workers=2,
        prefetch_factor=2,
        multiprocessing_context="fork",
    )
    assert _names(table) == [FETCH, COLLATE]
    assert [r.kind for r in table.rows] == [StageKind.FETCH, StageKind.COLLATE]
    assert table.structure == "TensorItems"
    assert sum(r.share_pct for r in table.rows) == pytest.approx(100)


def test_in_process_loading_and_getitems_are_timed_per_item(tmp_path):
    workload = _workload(BatchedItems(32))
    timed, _ = timed_workload(workload, tmp_path)
    assert isinstance(timed.dataset, TimedBatchDataset)
    batches, table = _time_all(workload, tmp_path)  # num_workers=0: the main process
    assert len(batches) == 4 and table.processes == 1
    assert table.items == 32 - BATCH


def test_imagefolder_compose_split_and_the_users_objects_unchanged(tmp_path):
    from torchvision import transforms as T
    from torchvision.datasets import ImageFolder
    from torchvision.datasets.folder import default_loader

    root = make_jpeg_folder(tmp_path / "jpegs", images=12, classes=2, min_side=40, max_side=56)
    compose = T.Compose(
        [
            T.RandomResizedCrop(24, antialias=True),
            T.ToTensor(),
            T.Normalize((0.5, 0.5, 0.5), (0.2, 0.2, 0.2)),
        ]
    )
    children = list(compose.transforms)
    folder = ImageFolder(str(root), transform=compose)
    dataset = Repeated(folder, 48)
    workload = _workload(dataset)
    batches, table = _time_all(
        workload,
        tmp_path / "stages",
        num_workers=1,
        prefetch_factor=2,
        multiprocessing_context="fork",
    )
    assert _names(table) == [
        LOAD,
        "RandomResizedCrop",
        "ToTensor",
        "Normalize",
        OTHER_IN_GETITEM,
        COLLATE,
    ]
    assert table.rows[0].kind == StageKind.DECODE
    assert table.structure == "Repeated > ImageFolder > Compose"
    assert sum(r.share_pct for r in table.rows) == pytest.approx(100)
    assert batches[0][0].shape == (BATCH, 3, 24, 24)
    # Nothing of the wrapping is left on the user's objects.
    assert workload.dataset is dataset and dataset.dataset is folder and workload.collate_fn is None
    assert folder.loader is default_loader and folder.transform is compose
    assert compose.transforms == children and all(
        type(t).__module__.startswith("torchvision") for t in compose.transforms
    )


def test_transforms_v2_compose_is_split_per_transform(tmp_path):
    from torchvision.transforms import v2

    dataset = TensorItems(32, transform=v2.Compose([AddOne(), v2.Lambda(lambda x: x), Double()]))
    _, table = _time_all(_workload(dataset), tmp_path)
    assert _names(table) == ["AddOne", "Lambda", "Double", OTHER_IN_GETITEM, COLLATE]


def test_the_same_transform_twice_gets_two_stages():
    plan = StagePlan()
    assert [plan.add("AddOne", StageKind.TRANSFORM) for _ in range(2)] == ["AddOne", "AddOne #2"]


# -- the table's arithmetic, on made-up totals ---------------------------------------------------
def _plan():
    plan = StagePlan(structure="ImageFolder > Compose")
    plan.add(LOAD, StageKind.DECODE)
    plan.add("Normalize", StageKind.TRANSFORM, "Normalize")
    return plan


# 100 items: decode 0.6 s wall (0.5 s CPU), Normalize 0.2 s, __getitem__ 0.9 s in all, collate 0.1
# s.
TOTALS = {
    LOAD: [100, 0.6, 0.5],
    "Normalize": [100, 0.2, 0.2],
    GETITEM: [100, 0.9, 0.75],
    COLLATE: [13, 0.1, 0.05],
}


def test_stage_table_arithmetic():
    table = stage_table(_plan(), TOTALS, processes=2)
    assert _names(table) == [LOAD, "Normalize", OTHER_IN_GETITEM, COLLATE]
    ms = {r.name: r.ms_per_item for r in table.rows}
    assert ms == pytest.approx({LOAD: 6.0, "Normalize": 2.0, OTHER_IN_GETITEM: 1.0, COLLATE: 1.0})
    assert [r.share_pct for r in table.rows] == pytest.approx([60, 20, 10, 10])
    assert table.row(LOAD).cpu_pct == pytest.approx(100 * 5 / 6)
    assert table.row(LOAD).items_per_s_per_cpu == pytest.approx(200)  # 1000 / 5 CPU ms
    assert table.cpu_ms_per_item == pytest.approx(8.0)  # 5 + 2 + 0.5 other + 0.5 collate
    assert table.loader_bound(2) == pytest.approx(250)
    assert table.dominant().name == LOAD


def test_stage_table_without_items_is_none_and_unused_stages_are_left_out():
    assert stage_table(_plan(), {COLLATE: [1, 0.1, 0.1]}) is None
    table = stage_table(_plan(), {GETITEM: [10, 0.1, 0.1], COLLATE: [2, 0.01, 0.01]})
    assert _names(table) == [FETCH, COLLATE]


def test_advice_names_the_dominant_stage_its_share_and_the_ceiling():
    table = stage_table(_plan(), TOTALS)
    line = dominant_line(table, 2, "input")
    assert line.startswith(f"{LOAD} takes 60% of a worker's time")
    assert "at 2 CPUs the loader cannot exceed 250 samples/s" in line
    assert "decode on the GPU" in line and "pre-resize" in line
    assert dominant_line(table, 2, "device").startswith("the loader does not limit")


def test_a_measured_alternative_shows_its_gain_and_the_diagnosis_record_round_trips():
    from fakes import burst

    from autotune.diagnosis import Context, explain

    table = stage_table(_plan(), TOTALS)
    alt = Alternative("batch normalise", ["Normalize"], 2.0, 0.5, 16, "measured here")
    profile = StageProfile(table, 123.0, 1.5, [alt])
    diagnosis = explain(burst(wait=0.5, compute=0.5), [], Context(usable_cpus=2))
    enriched = with_stages(diagnosis, profile, 2)
    measured = enriched.recommendations[-1]
    assert "costs 0.500 instead of 2.000 ms per item (75% less" in measured
    assert "from 250 to 308 samples/s" in measured  # 2000 / (8 - 1.5) CPU ms
    assert enriched.recommendations[: len(diagnosis.recommendations)] == diagnosis.recommendations
    record = DiagnosisRecord.model_validate(enriched.to_record())
    again = DiagnosisRecord.model_validate_json(record.model_dump_json())
    assert again == record and again.stages.dominant == LOAD
    assert sum(s.share_pct for s in again.stages.stages) == pytest.approx(100, abs=0.05)
    assert stage_record(profile, table, 2)["alternatives"][0]["gain_pct"] == 75.0


def test_measured_alternative_on_a_normalize_tail(tmp_path):
    from torchvision import transforms as T
    from torchvision.datasets import ImageFolder

    root = make_jpeg_folder(tmp_path / "jpegs", images=8, classes=2, min_side=40, max_side=56)
    folder = ImageFolder(
        str(root),
        transform=T.Compose([T.CenterCrop(32), T.ToTensor(), T.Normalize((0.4,) * 3, (0.2,) * 3)]),
    )
    (found,) = measure_alternatives(Repeated(folder, 32), batch_size=8)
    assert found.replaces == ["ToTensor", "Normalize"] and found.items == 8
    assert found.before_ms_per_item > 0 and found.after_ms_per_item > 0
    # No tail to move: nothing is claimed.
    assert measure_alternatives(TensorItems(16, transform=T.Compose([AddOne()])), 8) == []


def _cpu_decode(data):
    """The device arm's contract on the CPU: torchvision's decode of each file's bytes."""
    from torchvision.io import ImageReadMode, decode_jpeg

    return [decode_jpeg(d, mode=ImageReadMode.RGB) for d in data]


def test_the_decode_alternative_measures_the_folders_loader_against_a_batch_decode(tmp_path):
    from torchvision.datasets import ImageFolder

    root = make_jpeg_folder(tmp_path / "jpegs", images=6, classes=2, min_side=40, max_side=56)
    found = decode_alternative(Repeated(ImageFolder(str(root)), 24), _cpu_decode, "cpu")
    assert found is not None and found.items == 6 and found.replaces == [LOAD]
    assert found.before_ms_per_item > 0 and found.after_ms_per_item > 0
    assert "decode_jpeg(device='cpu')" in found.name


def test_a_decode_that_disagrees_with_the_loader_is_never_offered(tmp_path):
    from torchvision.datasets import ImageFolder

    root = make_jpeg_folder(tmp_path / "jpegs", images=4, classes=2, min_side=40, max_side=56)
    folder = ImageFolder(str(root))
    blank = lambda data: [torch.zeros_like(t) for t in _cpu_decode(data)]  # noqa: E731
    assert decode_alternative(folder, blank, "cpu") is None
    # No folder of files: nothing to decode elsewhere.
    assert decode_alternative(TensorItems(8), _cpu_decode, "cpu") is None


def test_without_a_cuda_device_no_decode_alternative_is_claimed(tmp_path, cpu):
    from torchvision.datasets import ImageFolder

    root = make_jpeg_folder(tmp_path / "jpegs", images=4, classes=2, min_side=40, max_side=56)
    assert measure_alternatives(ImageFolder(str(root)), 4, cpu) == []


@pytest.mark.gpu
def test_the_decode_alternative_on_a_real_gpu(tmp_path):
    from torchvision.datasets import ImageFolder

    root = make_jpeg_folder(tmp_path / "jpegs", images=32, classes=2, min_side=300, max_side=500)
    device = torch.device("cuda")
    found = [
        a for a in measure_alternatives(ImageFolder(str(root)), 32, device) if a.replaces == [LOAD]
    ]
    assert len(found) == 1, "nvJPEG's pixels did not agree with libjpeg's, or no JPEG was found"
    assert found[0].items == 32 and found[0].after_ms_per_item > 0


def test_profile_stages_runs_one_burst_and_leaves_nothing_behind(quick_burst, cpu):
    dataset = TensorItems(256, transform=__import__("torchvision").transforms.Compose([AddOne()]))
    workload = _workload(dataset)
    profile = profile_stages(
        workload, LoaderConfig(num_workers=1, prefetch_factor=2), cpu, quick_burst
    )
    assert _names(profile.table) == ["AddOne", OTHER_IN_GETITEM, COLLATE]
    assert profile.samples_per_s > 0
    assert workload.dataset is dataset and workload.collate_fn is None
    assert type(dataset.transform.transforms[0]) is AddOne
    from autotune.profiling import stage_recorder

    assert not any(
        d.startswith("/tmp/autotune-stages-") or "autotune-stages-" in d
        for d in stage_recorder._recorders
    )  # the main process's recorder was released


def test_budget_holds_the_stage_reserve_back_until_released():
    now = [0.0]
    budget = Budget(60.0, clock=lambda: now[0])
    budget.hold(4.0)
    now[0] = 50.0
    assert budget.time_left() == pytest.approx(6.0)
    budget.release_hold()
    assert budget.time_left() == pytest.approx(10.0)


def test_tune_reports_the_stages_of_the_tuned_configuration(tmp_path):
    from autotune import tune
    from autotune.workload.simulated import SimSpec, simulated_workload

    workload = simulated_workload(SimSpec.parse("cpu_ms=0.2,step_ms=2,batch=8,length=512"))
    result = tune(
        workload,
        max_trials=1,
        budget_s=30,
        results_dir=tmp_path,
        burst={"min_steps": 4, "min_seconds": 0.3, "max_seconds": 0.6},
    )
    stages = result.recipe.diagnosis.stages
    assert [s.name for s in stages.stages] == [FETCH, COLLATE]
    assert stages.dominant == FETCH
    assert any(r.startswith(f"{FETCH} takes") for r in result.recipe.diagnosis.recommendations)
    report = result.files["report"].read_text()
    assert "## Where the loader's time goes" in report and "plots/stages.png" in report
    assert result.files["plot_stages"].is_file()
    saved = json.loads(result.files["recipe"].read_text())
    assert saved["diagnosis"]["stages"]["dominant"] == FETCH
    off = tune(
        workload,
        max_trials=1,
        budget_s=30,
        results_dir=None,
        stages=False,
        burst={"min_steps": 4, "min_seconds": 0.3, "max_seconds": 0.6},
    )
    assert off.stages is None and off.recipe.diagnosis.stages is None


def test_a_preemption_on_the_way_back_from_the_cpu_clock_stays_inside_its_stage(
    monkeypatch, tmp_path
):
    """thread_time is a system call, where a busy machine preempts a worker: the 1 s the fake
    scheduler takes there must count in the stage that was running, not between stages."""
    from autotune.profiling import stage_recorder, stages

    wall = [0.0]
    cpu = [0.0]

    def perf_counter() -> float:
        return wall[0]

    def thread_time() -> float:
        wall[0] += 1.0  # descheduled on return from the system call: wall time, no CPU
        return cpu[0]

    monkeypatch.setattr(stages.time, "perf_counter", perf_counter)
    monkeypatch.setattr(stages.time, "thread_time", thread_time)
    monkeypatch.setattr(stage_recorder, "WARMUP_BATCHES", 0)

    def work(x):
        wall[0] += 0.25
        cpu[0] += 0.25
        return x

    timed = stages.Timed(work, "stage", str(tmp_path))
    assert timed(3) == 3
    rec = stage_recorder.recorder(str(tmp_path))
    count, wall_s, cpu_s = rec.totals["stage"]
    # Both system calls' preemptions (start and end) fall inside the stage's wall time.
    assert (count, wall_s, cpu_s) == (1, 2.25, 0.25)
    stage_recorder.release(str(tmp_path))
