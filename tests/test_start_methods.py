"""DataLoader workers under every start method: a FILE.py:factory workload whose Dataset is
defined in that file (spawn and forkserver workers import it by name in a fresh interpreter), and
a tuning whose every configuration with workers failed is an error, not a num_workers=0 recipe."""

import multiprocessing
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from torch.utils.data import DataLoader, Dataset

import autotune
from autotune.api import workers_failed_error
from autotune.burst import pool_start
from autotune.search.trial import TrialRecord, TrialStatus
from autotune.space.config import LoaderConfig
from autotune.space.start_method import start_method
from autotune.workload.spec import load_workload

WORK = """
    import torch
    from torch.utils.data import Dataset
    import autotune

    class Squares(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            return torch.full((4,), float(i * i))

    def make():
        return autotune.Workload(Squares(), batch_size=8, step=lambda batch: None)
"""
METHODS = [m for m in ("spawn", "forkserver") if m in multiprocessing.get_all_start_methods()]


@pytest.fixture
def work_file(tmp_path, monkeypatch):
    """A user's work.py under a unique stem (sys.modules is shared by the tests of a session)."""
    path = tmp_path / f"work_{tmp_path.name.replace('-', '_')}.py"
    path.write_text(textwrap.dedent(WORK))
    monkeypatch.setattr(sys, "path", list(sys.path))  # the file's folder goes onto it
    yield path
    sys.modules.pop(path.stem, None)


def test_a_file_is_imported_under_its_own_name_from_its_folder(work_file):
    workload = load_workload(f"{work_file}:make")
    assert type(workload.dataset).__module__ == work_file.stem
    assert sys.path[0] == str(work_file.parent)  # passed on to spawned workers
    again = load_workload(f"{work_file}:make")  # `autotune verify` rebuilds it: the same module
    assert type(again.dataset) is type(workload.dataset)


def test_a_file_named_like_a_loaded_module_keeps_a_private_name(tmp_path, monkeypatch):
    path = tmp_path / "json.py"  # the standard library's json is imported already
    path.write_text(textwrap.dedent(WORK))
    monkeypatch.setattr(sys, "path", list(sys.path))
    workload = load_workload(f"{path}:make")
    assert type(workload.dataset).__module__ == "autotune_user_json"
    assert str(tmp_path) not in sys.path
    sys.modules.pop("autotune_user_json", None)


@pytest.mark.parametrize("method", METHODS)
def test_workers_of_every_start_method_load_a_dataset_defined_in_the_file(work_file, method):
    workload = load_workload(f"{work_file}:make")
    loader = DataLoader(
        workload.dataset, batch_size=8, num_workers=1, multiprocessing_context=method
    )
    batches = list(loader)
    assert len(batches) == 8 and batches[1][0].tolist() == [64.0] * 4


def _trial(number, workers, status, error=None):
    config = LoaderConfig(num_workers=workers, prefetch_factor=2 if workers else None)
    return TrialRecord(number, config, status, error=error)


def _result(*trials):
    return SimpleNamespace(
        trials=list(trials), workload=SimpleNamespace(name="work"), run_dir=Path("results/runs/x")
    )


@pytest.mark.parametrize(
    "method, fix",
    [
        ("spawn", "importable and picklable"),
        ("forkserver", "importable and picklable"),
        ("fork", "/dev/shm"),
    ],
)
def test_every_worker_configuration_failed_is_an_error_that_says_what_to_change(
    monkeypatch, method, fix
):
    monkeypatch.setattr("autotune.api.start_method", lambda: method)
    result = _result(
        _trial(0, 0, TrialStatus.OK),
        _trial(1, 2, TrialStatus.FAILED, "DataLoader worker exited unexpectedly"),
        _trial(2, 4, TrialStatus.FAILED, "DataLoader worker exited unexpectedly"),
    )
    error = workers_failed_error(result)
    assert error is not None
    text = str(error)
    assert "\n" not in text and f"({method} start method)" in text
    assert "all 2 configurations with workers" in text and "exited unexpectedly" in text
    assert fix in text and "results/runs/x" in text


@pytest.mark.parametrize(
    "trials",
    [
        [_trial(0, 0, TrialStatus.OK)],  # no worker configuration tried: nothing to say
        [
            _trial(0, 0, TrialStatus.OK),
            _trial(1, 2, TrialStatus.FAILED, "x"),
            _trial(2, 3, TrialStatus.OK),
        ],
        [_trial(0, 0, TrialStatus.OK), _trial(1, 2, TrialStatus.PRUNED)],
        [_trial(0, 0, TrialStatus.OK), _trial(1, 2, TrialStatus.SKIPPED, "RAM")],  # never ran
    ],
)
def test_a_worker_configuration_that_ran_clears_the_error(trials):
    assert workers_failed_error(_result(*trials)) is None


def test_start_method_of_a_loader():
    assert start_method("spawn") == "spawn"
    assert start_method(multiprocessing.get_context("spawn")) == "spawn"
    assert start_method() in multiprocessing.get_all_start_methods()


def test_a_timed_out_pool_is_told_to_use_fewer_workers_or_more_time():
    result = _result(
        _trial(0, 0, TrialStatus.OK),
        _trial(1, 23, TrialStatus.FAILED, "burst exceeded its time limit of 36 s"),
    )
    assert "lower --max-workers" in str(workers_failed_error(result))


@pytest.mark.parametrize(
    "method, workers, cpus, room",
    [
        ("fork", 8, 2, 0.0),  # a copy of the tuning process: no room needed
        ("spawn", 0, 2, 0.0),  # no pool
        ("spawn", 1, 2, 2 * 3.0),  # one round of fresh interpreters, twice over
        ("spawn", 4, 2, 2 * 2 * 3.0),  # 4 workers on 2 cores start in two rounds
        ("forkserver", 23, 2, 2 * 12 * 3.0),
    ],
)
def test_a_pools_start_up_gets_room_in_the_bursts_time_limit(
    monkeypatch, method, workers, cpus, room
):
    monkeypatch.setattr(pool_start, "interpreter_start_s", lambda: 3.0)
    config = LoaderConfig(
        num_workers=workers,
        prefetch_factor=2 if workers else None,
        multiprocessing_context=method if workers else None,
    )
    assert pool_start.start_allowance_s(config, cpus) == room


def test_the_interpreter_start_up_is_measured_once():
    pool_start.interpreter_start_s.cache_clear()
    first = pool_start.interpreter_start_s()
    assert first > 0 and pool_start.interpreter_start_s() == first


class Numbers(Dataset):
    """Defined at the top level of an importable module: what spawned workers unpickle."""

    def __len__(self):
        return 48

    def __getitem__(self, i):
        return i


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_the_online_loader_runs_spawned_and_forkserver_workers(tmp_path, method):
    loader = autotune.DataLoader(
        Numbers(),
        batch_size=4,
        num_workers=1,
        multiprocessing_context=method,
        online={"results_dir": str(tmp_path), "epochs": 2, "max_workers": 2},
    )
    try:
        for _ in range(2):
            assert sorted(int(i) for batch in loader for i in batch) == list(range(48))
        assert loader.tuner_state.failed == {}  # no configuration's workers failed to start
    finally:
        loader.close()


OFFLINE_POOL = """
from autotune.space.config import LoaderConfig
from autotune.workload.spec import load_workload
workload = load_workload("sim:length=64")
workload.make_loader(LoaderConfig(num_workers=0))
assert "numpy.random" not in sys.modules, "imported without workers"
workload.make_loader(LoaderConfig(num_workers=1))
"""
ONLINE_POOL = """
import autotune
from autotune.online.options import TUNED
loader = autotune.DataLoader(list(range(8)), num_workers=1, fixed=TUNED, online={"memory": False})
assert "numpy.random" not in sys.modules, "imported before the pool starts"
next(iter(loader))
"""
RECIPE_POOL = """
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig
measured = {"samples_per_s": 1.0, "baseline_samples_per_s": 1.0, "speedup": 1.0}
recipe = Recipe.from_config(
    LoaderConfig(num_workers=1), measured=measured, workload={}, environment={}
)
recipe.dataloader(list(range(8)), 2, num_workers=0)
assert "numpy.random" not in sys.modules, "imported without workers"
recipe.dataloader(list(range(8)), 2)
"""


@pytest.mark.parametrize(
    "pool", [OFFLINE_POOL, ONLINE_POOL, RECIPE_POOL], ids=["burst", "online", "recipe"]
)
def test_what_a_forked_worker_would_import_first_is_imported_before_its_pool_starts(pool, tmp_path):
    """torch's worker loop seeds numpy.random, which numpy loads lazily: imported in each forked
    worker, where a garbage collection inside the import can kill it on Python 3.11 and older
    (CPython gh-91351). A pool that autotune starts finds it imported (in a fresh interpreter:
    this one has imported it already)."""
    head = "import sys\nimport torch\n"
    check = 'assert "numpy.random" not in sys.modules, "imported by torch: nothing to test"\n'
    code = head + check + pool + 'assert "numpy.random" in sys.modules\n'
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
