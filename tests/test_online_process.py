"""The loaders of one process: distinct names, a re-created loader reusing the choice, evaluation
loaders on the training loader's choice, the CPUs shared, an epoch broken off and time spent in
another loader never counted as a step, and attributes that read the configuration running."""

from __future__ import annotations

import torch
from online_fakes import Indices, StepClock, _nothing_written_at_exit  # noqa: F401

import autotune
from autotune.online.climb_types import ClimbSettings
from autotune.online.meter import Meter
from autotune.online.policy import HillClimb
from autotune.online.registry import registry
from autotune.online.workload import machine_differences
from autotune.space.config import LoaderConfig
from autotune.space.cpus import usable_cpus

QUICK = {
    "max_explore_share": 1.0,
    "window_steps": 4,
    "window_s": 0.0,
    "fixed": ["prefetch_factor"],
    "max_workers": 2,
}


def _fake_clocked(loader):
    loader.tune_with(
        loader._session.policy,
        clock=StepClock(
            lambda: loader.config,
            (0.010, 0.005),
            lambda: loader._session.meter._entered is not None,
        ),
    )
    loader._own_policy = False  # the first epoch still decides its role, as in a real run
    return loader


def test_two_loaders_of_one_dataset_class_get_two_names():
    train_loader = autotune.DataLoader(Indices(40), batch_size=2, shuffle=True)
    val_loader = autotune.DataLoader(Indices(10), batch_size=2)
    names = {train_loader._session.outbox.name, val_loader._session.outbox.name}
    assert names == {"Indices-train_loader", "Indices-val_loader"}
    loaders = [autotune.DataLoader(Indices(n), batch_size=2) for n in (5, 6)]  # one call site
    assert len({x._session.outbox.name for x in loaders}) == 2


def _create_loader(n):
    loader = autotune.DataLoader(Indices(n), batch_size=2)  # a factory's variable, as timm's
    return loader


def test_a_factorys_loaders_are_named_by_their_callers_variables():
    loader_train = _create_loader(40)
    loader_eval = _create_loader(10)
    assert (loader_train._session.outbox.name, loader_eval._session.outbox.name) == (
        "Indices-loader_train",
        "Indices-loader_eval",
    )


def test_a_loader_recreated_for_the_same_workload_reuses_the_choice(tmp_path):
    def make():
        loader = autotune.DataLoader(
            Indices(240), batch_size=1, shuffle=True, online={**QUICK, "results_dir": str(tmp_path)}
        )
        return _fake_clocked(loader)

    first = make()
    list(first)
    assert not first.tuner_state.exploring
    again = make()
    assert not again.tuner_state.exploring and again.config == first.tuner_state.chosen
    assert again._session.outbox.results_dir is None  # one report per workload
    assert len(list((tmp_path / "runs").iterdir())) == 1


def test_an_evaluation_loader_runs_the_training_choice_and_reports_it(tmp_path):
    train_loader = _fake_clocked(
        autotune.DataLoader(
            Indices(240), batch_size=1, shuffle=True, online={**QUICK, "results_dir": str(tmp_path)}
        )
    )
    val_loader = autotune.DataLoader(
        Indices(20), batch_size=2, online={**QUICK, "results_dir": str(tmp_path)}
    )
    list(train_loader)
    chosen = train_loader.config
    with torch.no_grad():
        batches = [b.tolist() for b in val_loader]
    assert batches == [[i, i + 1] for i in range(0, 20, 2)]
    assert val_loader.config.num_workers == chosen.num_workers
    assert not val_loader.tuner_state.exploring and val_loader.tuner_state.exploration_steps == 0
    reports = {
        p.name.split("-online-")[1]: (p / "report.md").read_text()
        for p in (tmp_path / "runs").iterdir()
    }
    assert set(reports) == {"Indices-train_loader", "Indices-val_loader"}
    assert "evaluation loader" in reports["Indices-val_loader"]
    assert "Indices-train_loader" in reports["Indices-val_loader"]


def test_an_evaluation_loader_before_any_training_choice_runs_as_given():
    val_loader = autotune.DataLoader(Indices(20), batch_size=2, num_workers=1)
    with torch.no_grad():
        assert len(list(val_loader)) == 10
    assert (
        val_loader.config.num_workers == 1
        and "as the script set it" in val_loader._session.untuned_why
    )


def test_shuffling_loaders_share_the_cpus():
    a = autotune.DataLoader(Indices(40), batch_size=2, shuffle=True)
    b = autotune.DataLoader(Indices(40), batch_size=2, shuffle=True)
    next(iter(a))
    assert a._session.policy.settings.usable_cpus == max(1, usable_cpus().count // 2)
    assert registry().cpu_share(b, 8) == 4
    del a
    assert registry().cpu_share(b, 8) == 8


class StepsSeen(HillClimb):
    def __init__(self):
        super().__init__(
            LoaderConfig(),
            ("num_workers",),
            ClimbSettings(epoch_steps=None, usable_cpus=2, cuda=False, min_horizon_steps=10_000),
        )
        self.steps_s: list[float | None] = []

    def observe(self, step):
        self.steps_s.append(step.step_s)
        return None


def _ticking(loader, clock):
    policy = StepsSeen()
    loader.tune_with(policy, clock=clock)
    return policy


class Tick:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def test_an_epoch_broken_off_ends_at_the_next_iter():
    clock = Tick()
    loader = autotune.DataLoader(Indices(20), batch_size=2)
    policy = _ticking(loader, clock)
    for i, _ in enumerate(loader):
        if i == 3:
            break  # as limit_train_batches or a sanity check do
    clock.now += 1000  # validation, checkpointing
    assert len(list(loader)) == 10  # a whole new epoch, from the sampler's start
    assert policy.steps_s[4] is None  # the first step after the break is no step
    assert all(s is not None and s < 10 for s in policy.steps_s[5:])


def test_time_spent_in_another_loader_is_no_step():
    clock = Tick()
    train = autotune.DataLoader(Indices(20), batch_size=2)
    policy = _ticking(train, clock)
    other = autotune.DataLoader(Indices(4), batch_size=2)
    other.tune_with(other._session.policy, clock=Meter().clock)
    it = iter(train)
    next(it), next(it)
    clock.now += 1000
    list(other)  # a validation pass in the middle of the epoch
    next(it)
    assert policy.steps_s[2] is None and policy.steps_s[1] is not None


def test_attributes_read_the_configuration_running():
    loader = autotune.DataLoader(Indices(40), batch_size=2, num_workers=0)
    assert (loader.num_workers, loader.prefetch_factor, loader.persistent_workers) == (
        0,
        None,
        False,
    )
    running = LoaderConfig(num_workers=2, prefetch_factor=4, persistent_workers=True)
    loader._session.running_config = running
    assert (
        loader.num_workers,
        loader.prefetch_factor,
        loader.persistent_workers,
        loader.pin_memory,
    ) == (2, 4, True, False)
    assert loader.given().num_workers == 0  # what torch would run stays the script's


def test_a_recipe_of_another_machine_is_a_starting_point():
    here = usable_cpus()
    assert (
        machine_differences(
            {"usable_cpus": here.count, "ranks_per_node": here.ranks, "device": "cpu"}, cuda=False
        )
        == []
    )
    differs = machine_differences({"usable_cpus": here.count + 6, "device": "cuda:0"}, cuda=False)
    assert differs == [
        f"usable_cpus {here.count + 6} here {here.count}",
        "device 'cuda' here 'cpu'",
    ]


def test_an_evaluation_loader_made_anew_at_each_evaluation_keeps_one_report(tmp_path):
    """transformers' get_eval_dataloader makes the evaluation loader again at every evaluation:
    one report, rewritten, not a run folder per evaluation under one name."""
    train_loader = _fake_clocked(
        autotune.DataLoader(
            Indices(240), batch_size=1, shuffle=True, online={**QUICK, "results_dir": str(tmp_path)}
        )
    )

    def evaluate():
        val_loader = autotune.DataLoader(
            Indices(20), batch_size=2, online={**QUICK, "results_dir": str(tmp_path)}
        )
        with torch.no_grad():
            return [b.tolist() for b in val_loader]

    first = evaluate()  # before the training loader chose: as the script set it
    list(train_loader)
    assert evaluate() == evaluate() == first
    folders = sorted(p.name.split("-online-")[1] for p in (tmp_path / "runs").iterdir())
    assert folders == ["Indices-train_loader", "Indices-val_loader"]
    val_report = next((tmp_path / "runs").glob("*-online-Indices-val_loader")) / "report.md"
    assert "Indices-train_loader" in val_report.read_text()  # rewritten by the latest evaluation


def test_a_loader_is_named_by_the_whole_assignment_statement_around_its_call(tmp_path):
    """A formatter puts a call wrapped in another one on a line of its own, which holds no `=`:
    the statement around the line, not the line, names the loader."""
    from autotune.online.registry import _assigned

    source = tmp_path / "train.py"
    source.write_text(
        "train_loader = prepare(\n"  # 1
        "    DataLoader(dataset, batch_size=8)\n"  # 2
        ")\n"  # 3
        "class Task:\n"  # 4
        "    def setup(self):\n"  # 5
        "        self.val_loader: DataLoader = DataLoader(\n"  # 6
        "            dataset,\n"  # 7
        "        )\n"  # 8
        "print(DataLoader(dataset))\n"  # 9
    )
    assert _assigned(str(source), 2) == "train_loader"
    assert _assigned(str(source), 7) == "val_loader"
    assert _assigned(str(source), 9) is None
