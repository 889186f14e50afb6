"""autotune.DataLoader end to end on a fake clock: it tunes in the first epoch and keeps the
choice, its recipe is the CLI's model, a saved recipe skips tuning for the same workload only,
results are written by the finisher, an IterableDataset is not tuned, options are checked, and
it is built like torch's (also when torch's name is patched to it)."""

import json
import logging

import pytest
import torch
import torch.utils.data
from online_fakes import Indices, StepClock, _nothing_written_at_exit, as_lists  # noqa: F401
from torch.utils.data import IterableDataset

import autotune
from autotune.errors import OptionsError
from autotune.online.climb_types import normal
from autotune.online.loader import TORCH_DATALOADER
from autotune.online.policy import HillClimb
from autotune.recipe.model import Recipe, load_recipe
from autotune.space.config import LoaderConfig

FAST_WITH_WORKERS = (0.010, 0.005)  # step seconds: without workers, with any


def _tuned(n=240, **online):
    loader = autotune.DataLoader(
        Indices(n),
        batch_size=1,
        online={
            "max_explore_share": 1.0,
            "window_steps": 4,
            "window_s": 0.0,
            "fixed": ["prefetch_factor"],
            "max_workers": 2,
            **online,
        },
    )
    climb = loader._session.policy
    loader.tune_with(
        climb,
        clock=StepClock(
            lambda: loader.config,
            FAST_WITH_WORKERS,
            lambda: loader._session.meter._entered is not None,
        ),
    )
    return loader


def test_tunes_in_the_first_epoch_and_keeps_the_choice(caplog):
    loader = _tuned()
    with caplog.at_level(logging.INFO, logger="autotune"):
        first = as_lists(loader)
    state = loader.tuner_state
    assert sorted(i for batch in first for i in batch) == list(range(240))
    assert not state.exploring and state.stop_reason == "resolved within the measured noise"
    assert state.chosen.num_workers == 1  # as fast as two, and cheaper
    assert 0 < state.exploration_steps < 240 and state.exploration_cost_s > 0
    # Every configuration it measured, with its windows in order: what the verdicts read.
    assert state.measured and set(state.measured) <= set(state.windows)
    assert all(len(w) >= 1 and min(w) > 0 for w in state.windows.values())
    assert [r.message for r in caplog.records if "chose" in r.message][0].count("\n") == 0
    as_lists(loader)
    assert loader.tuner_state.exploration_steps == state.exploration_steps  # no more exploring


def test_recipe_is_the_cli_model_with_the_exploration():
    loader = _tuned()
    assert loader.recipe is None  # before tuning ends
    list(loader)
    recipe = loader.recipe
    assert isinstance(recipe, Recipe)
    assert recipe.config.num_workers == 1
    assert recipe.measured.speedup == pytest.approx(2.0, rel=0.01)
    assert recipe.measured.exploration_steps == loader.tuner_state.exploration_steps
    assert recipe.workload["source"] == "autotune.DataLoader"
    Recipe.model_validate_json(recipe.to_json())  # round-trips through the schema's model


def test_saved_recipe_skips_tuning_for_the_same_workload(tmp_path):
    tuned = _tuned()
    list(tuned)
    path = tuned.recipe.save(tmp_path / "recipe.json")
    again = autotune.DataLoader(Indices(240), batch_size=1, recipe=str(path))
    assert not again.tuner_state.exploring
    assert again.config == normal(tuned.recipe.config)
    assert again.recipe is not None and again.recipe.measured == tuned.recipe.measured
    assert sorted(i for batch in as_lists(again) for i in batch) == list(range(240))


def test_fixed_knobs_keep_the_given_value_over_a_recipe(tmp_path):
    tuned = _tuned()
    list(tuned)
    path = tuned.recipe.save(tmp_path / "recipe.json")
    again = autotune.DataLoader(Indices(240), batch_size=1, recipe=path, fixed=["num_workers"])
    assert tuned.recipe.config.num_workers == 1 and again.config.num_workers == 0


def test_recipe_of_another_workload_is_the_starting_point(tmp_path, caplog):
    tuned = _tuned()
    list(tuned)
    path = tuned.recipe.save(tmp_path / "recipe.json")
    with caplog.at_level(logging.INFO, logger="autotune"):
        other = autotune.DataLoader(Indices(240), batch_size=2, recipe=path)
    assert other.tuner_state.exploring
    assert other.config.num_workers == tuned.recipe.config.num_workers
    assert any("another workload (batch_size 1 here 2)" in r.message for r in caplog.records)


def test_finisher_writes_recipe_and_report(tmp_path):
    loader = _tuned(results_dir=str(tmp_path), name="unit")
    list(loader)
    run_dir = loader.write_results()
    assert run_dir.parent == tmp_path / "runs" and run_dir.name.endswith("online-unit")
    assert load_recipe(run_dir / "recipe.json").config == loader.recipe.config
    report = (run_dir / "report.md").read_text()
    assert "autotune.DataLoader chose w1" in report and "| **" in report
    assert loader.write_results() == run_dir  # one folder per loader, rewritten in place
    assert list((tmp_path / "runs").iterdir()) == [run_dir]


def test_written_when_exploring_ends_not_only_at_exit(tmp_path):
    loader = _tuned(results_dir=str(tmp_path), name="unit")
    list(loader)
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert load_recipe(run_dir / "recipe.json").measured.exploration_complete is True


def test_a_run_that_ends_while_exploring_leaves_the_best_so_far_marked_incomplete(tmp_path):
    loader = _tuned(results_dir=str(tmp_path), name="unit", max_explore_steps=10_000)
    it, climb = iter(loader), loader._session.policy
    while len(climb.measured) < 2:  # the start is measured, a candidate under way
        next(it)
    next(it)
    assert loader.tuner_state.exploring
    run_dir = loader.write_results()  # what exit or SIGTERM writes (at_exit.write_all)
    m = load_recipe(run_dir / "recipe.json").measured
    assert m.exploration_complete is False and m.samples_per_s is not None
    assert (
        m.exploration_stop.startswith("exploration incomplete (") and "steps)" in m.exploration_stop
    )
    assert "exploration incomplete" in (run_dir / "report.md").read_text()


def test_nothing_written_before_anything_was_measured(tmp_path):
    loader = autotune.DataLoader(Indices(8), batch_size=1, online={"results_dir": str(tmp_path)})
    assert loader.write_results() is None and not (tmp_path / "runs").exists()


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset_runs_as_given_and_says_so(caplog):
    with caplog.at_level(logging.INFO, logger="autotune"):
        loader = autotune.DataLoader(Count(10), batch_size=3, num_workers=2)
    notices = [r.message for r in caplog.records if "IterableDataset" in r.message]
    assert len(notices) == 1 and "\n" not in notices[0]
    expected = as_lists(TORCH_DATALOADER(Count(10), batch_size=3, num_workers=2))
    for _ in range(2):
        assert as_lists(loader) == expected
    assert not loader.tuner_state.exploring and loader.recipe is None


def test_tuning_off_from_the_environment(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_ONLINE", json.dumps({"enabled": False, "results_dir": None}))
    loader = autotune.DataLoader(Indices(8), batch_size=2, num_workers=1)
    assert not loader.tuner_state.exploring and loader.config.num_workers == 1
    assert loader.online.enabled is False


def test_keywords_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_ONLINE", json.dumps({"fixed": ["num_workers"], "window_steps": 5}))
    loader = autotune.DataLoader(Indices(8), fixed=("pin_memory",))
    assert loader.fixed == ("pin_memory",) and loader.online.window_steps == 5


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"fixed": ["num_worker"]}, "'num_worker' is not a knob autotune.DataLoader tunes"),
        ({"max_explore_share": 2}, "max_explore_share"),
        ({"colour": 1}, "colour"),
    ],
)
def test_bad_options_fail_in_one_line(bad, message):
    with pytest.raises(OptionsError) as err:
        autotune.DataLoader(Indices(4), online=bad)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_environment_fails_in_one_line(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_ONLINE", "{not json")
    with pytest.raises(OptionsError, match="AUTOTUNE_ONLINE is not JSON"):
        autotune.DataLoader(Indices(4))


def test_torch_checks_and_attributes_are_torchs():
    with pytest.raises(ValueError, match="prefetch_factor"):
        autotune.DataLoader(Indices(4), prefetch_factor=2)
    loader = autotune.DataLoader(Indices(10), batch_size=4, num_workers=1, drop_last=True)
    assert isinstance(loader, torch.utils.data.DataLoader) and len(loader) == 2
    assert (loader.num_workers, loader.prefetch_factor, loader.drop_last) == (1, 2, True)


def test_recreated_from_its_attributes_like_frameworks_do(monkeypatch):
    """Lightning and HF read each __init__ argument back from the loader's attributes."""
    import inspect

    loader = _tuned(n=60)
    list(loader)
    names = [p for p in inspect.signature(type(loader).__init__).parameters if p != "self"]
    kwargs = {n: getattr(loader, n) for n in names if hasattr(loader, n)}
    kwargs.pop("batch_sampler")  # frameworks drop the default batch_sampler when batch_size is set
    kwargs.pop("sampler")
    again = type(loader)(**kwargs)
    assert not again.tuner_state.exploring  # its own recipe: the same workload, no tuning
    assert again.config.num_workers == loader.config.num_workers


def test_no_recursion_when_torch_name_points_at_it(monkeypatch):
    monkeypatch.setattr(torch.utils.data, "DataLoader", autotune.DataLoader)
    monkeypatch.setattr(torch.utils.data.dataloader, "DataLoader", autotune.DataLoader)
    loader = torch.utils.data.DataLoader(
        Indices(12), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(2)
    )
    expected = as_lists(
        TORCH_DATALOADER(
            Indices(12), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(2)
        )
    )
    assert as_lists(loader) == expected
    assert isinstance(loader._session.policy, HillClimb)


def _slow_start(worker_id):
    import time

    time.sleep(0.2)


def test_a_switch_start_up_is_in_the_wait_and_the_exploration():
    from online_fakes import W0, W1, SwitchEvery

    loader = autotune.DataLoader(Indices(12), batch_size=2, worker_init_fn=_slow_start)
    loader.tune_with(SwitchEvery(2, configs=(W0, W1)))
    list(loader)
    meter, ledger = loader._session.meter, loader._session.ledger
    assert meter.startup_s >= 0.2 and meter.wait_s >= meter.startup_s  # inside the wait
    assert ledger.explore_steps == 6 and ledger.explore_s >= 0.2


def test_close_stops_the_workers_and_ends_the_epoch_in_progress():
    import multiprocessing

    before = set(multiprocessing.active_children())
    loader = autotune.DataLoader(
        Indices(40), batch_size=2, num_workers=2, persistent_workers=True, online={"enabled": False}
    )
    running = iter(loader)
    next(running)
    assert set(multiprocessing.active_children()) - before
    loader.close()
    assert not set(multiprocessing.active_children()) - before
    with pytest.raises(StopIteration):
        next(running)
    assert sorted(i for batch in as_lists(loader) for i in batch) == list(range(40))
    loader.close()  # the persistent configuration's kept workers go too
    assert not set(multiprocessing.active_children()) - before


def test_exploration_ended_at_is_the_first_step_after_exploring():
    loader = _tuned()
    assert loader.tuner_state.exploration_ended_at is None
    list(loader)
    state = loader.tuner_state
    assert state.exploration_ended_at == state.exploration_steps > 0


def test_the_backlog_of_finished_batches_is_read_while_exploring_only():
    from dataclasses import dataclass, field

    from online_fakes import W0, W2

    @dataclass
    class Recording:
        current: LoaderConfig = W0
        exploring: bool = True
        steps: list = field(default_factory=list)

        def observe(self, step):
            self.steps.append((self.current, step.backlog))
            if len(self.steps) == 4:
                self.current = W2
                return W2
            if len(self.steps) == 12:
                self.exploring = False
            return None

        def epoch_ended(self):
            return None

    loader = autotune.DataLoader(Indices(16), batch_size=1)
    policy = Recording()
    loader.tune_with(policy)
    list(loader)
    backlogs = {config: [b for c, b in policy.steps[:12] if c == config] for config in (W0, W2)}
    assert backlogs[W0] == [0] * 4  # the main process fetches when asked: nothing ahead
    assert all(isinstance(b, int) and 0 <= b <= W2.prefetch_depth for b in backlogs[W2])
    assert [b for _, b in policy.steps[12:]] == [None] * 4  # tuned: nothing is read
