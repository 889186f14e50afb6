import optuna
import pytest

from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.cpus import usable_cpus
from autotune.space.space import SearchSpace, max_workers_for


def test_defaults_are_valid_everywhere():
    assert PYTORCH_DEFAULTS.problems(cuda=False) == []
    assert PYTORCH_DEFAULTS.dataloader_kwargs() == {"num_workers": 0, "pin_memory": False}


@pytest.mark.parametrize(
    "config, message",
    [
        (LoaderConfig(num_workers=0, prefetch_factor=2), "prefetch_factor needs num_workers > 0"),
        (
            LoaderConfig(num_workers=0, persistent_workers=True),
            "persistent_workers needs num_workers > 0",
        ),
        (LoaderConfig(pin_memory=True), "pin_memory needs a CUDA device"),
        (LoaderConfig(non_blocking=True), "non_blocking needs a CUDA device"),
        (LoaderConfig(side_stream_prefetch=True), "side_stream_prefetch needs a CUDA device"),
        (LoaderConfig(num_workers=-1), "num_workers must be >= 0"),
        (LoaderConfig(num_workers=2, prefetch_factor=0), "prefetch_factor must be >= 1"),
    ],
)
def test_invalid_points_are_named(config, message):
    assert message in config.problems(cuda=False)


def test_channels_last_needs_image_inputs():
    assert LoaderConfig(channels_last=True).problems(cuda=False, channels_last_ok=False) == [
        "channels_last needs 4-D floating-point inputs"
    ]
    assert LoaderConfig(channels_last=True).problems(cuda=False, channels_last_ok=True) == []


def test_cuda_knobs_valid_on_cuda():
    cfg = LoaderConfig(4, True, 2, True, True, True, True)
    assert cfg.problems(cuda=True) == []


def test_dataloader_kwargs_only_valid_arguments():
    assert LoaderConfig(
        num_workers=3, prefetch_factor=4, persistent_workers=True
    ).dataloader_kwargs() == {
        "num_workers": 3,
        "pin_memory": False,
        "prefetch_factor": 4,
        "persistent_workers": True,
    }


def test_prefetch_depth_uses_torch_default_factor():
    assert LoaderConfig(num_workers=3).prefetch_depth == 6
    assert LoaderConfig(num_workers=3, prefetch_factor=4).prefetch_depth == 12
    assert LoaderConfig().prefetch_depth == 0


def test_worker_range_reaches_past_cpu_count():
    assert max_workers_for(2) == 8
    assert max_workers_for(16) == 32  # capped
    assert max_workers_for(16, cap=64) == 64


@pytest.mark.parametrize("cuda, channels_last_ok", [(False, False), (False, True), (True, True)])
def test_define_by_run_never_suggests_an_invalid_point(cuda, channels_last_ok):
    space = SearchSpace(max_workers=8, cuda=cuda, channels_last_ok=channels_last_ok)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    seen = set()
    for _ in range(200):
        trial = study.ask()
        config = space.suggest(trial)
        assert space.problems(config) == []
        study.tell(trial, 1.0)
        seen.add(config)
    assert any(c.num_workers > 2 for c in seen)  # past the core count of this machine
    if not cuda:
        assert not any(c.pin_memory or c.non_blocking or c.side_stream_prefetch for c in seen)


def test_grid_is_valid_and_complete():
    space = SearchSpace(max_workers=2, cuda=False, channels_last_ok=False)
    grid = list(space.grid())
    assert len(grid) == 1 + 2 * 4 * 2  # w0, then w1..2 x 4 prefetch factors x persistent
    assert all(space.problems(c) == [] for c in grid)
    assert len(set(grid)) == len(grid)


def test_usable_cpus_from_affinity_and_slurm(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert usable_cpus({}).count == 4
    assert usable_cpus({}).source == "CPU affinity"
    budget = usable_cpus({"SLURM_CPUS_PER_TASK": "2"})
    assert (budget.count, budget.source) == (2, "SLURM_CPUS_PER_TASK")
    assert usable_cpus({"SLURM_CPUS_PER_TASK": "16"}).count == 4  # affinity is the harder limit
    assert usable_cpus({"SLURM_CPUS_PER_TASK": "junk"}).count == 4


def test_a_pool_runs_another_depth_and_turns_persistent_but_never_back():
    w4 = LoaderConfig(num_workers=4, prefetch_factor=2, persistent_workers=True)
    assert w4.same_pool(LoaderConfig(num_workers=4, prefetch_factor=8, persistent_workers=True))
    assert w4.same_pool(w4)
    assert not w4.same_pool(LoaderConfig(num_workers=5, prefetch_factor=2, persistent_workers=True))
    assert not w4.same_pool(LoaderConfig(num_workers=4, prefetch_factor=8))  # it would stop
    fresh = LoaderConfig(num_workers=4)  # the script's own, torch's default depth
    assert fresh.same_pool(w4)  # kept past its epoch's end
    assert fresh.same_pool(LoaderConfig(num_workers=4, prefetch_factor=8))
    assert not fresh.same_pool(LoaderConfig(num_workers=4, prefetch_factor=2, pin_memory=True))
    assert not w4.same_pool(LoaderConfig(num_workers=4, persistent_workers=True))  # no depth named
    assert not PYTORCH_DEFAULTS.same_pool(PYTORCH_DEFAULTS)  # no pool at num_workers=0
