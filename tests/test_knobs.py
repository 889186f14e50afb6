"""The knob registry drives the configuration, the space, the recipe, the report and the cost
order."""

import typing
from dataclasses import fields

import optuna
import pytest
from torch.utils.data import DataLoader

from autotune.recipe.model import DataLoaderArgs, TransferArgs
from autotune.recipe.schema import recipe_schema
from autotune.report.table import COLUMNS, HEADERS
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME, KNOBS, Target, cost_order, knobs_for, opt_in_knobs
from autotune.space.space import SearchSpace


def test_every_derived_form_has_every_knob_in_registry_order():
    names = [k.name for k in KNOBS]
    assert [f.name for f in fields(LoaderConfig)] == names
    assert [n for n in COLUMNS if n in BY_NAME] == names
    assert all(HEADERS[k.name] == k.header for k in KNOBS)
    assert list(DataLoaderArgs.model_fields) == [k.name for k in knobs_for(Target.DATALOADER)]
    assert list(TransferArgs.model_fields) == [k.name for k in knobs_for(Target.TRANSFER)]
    schema = recipe_schema()["$defs"]
    assert set(schema["DataLoaderArgs"]["properties"]) | set(
        schema["TransferArgs"]["properties"]
    ) == set(names)


def test_the_configuration_declares_each_knob_with_its_type_and_default():
    hints = typing.get_type_hints(LoaderConfig)
    assert [(f.name, hints[f.name], f.default) for f in fields(LoaderConfig)] == [
        (k.name, k.annotation, k.default) for k in KNOBS
    ]


def test_dataloader_arguments_are_accepted_by_torch_at_every_grid_point():
    space = SearchSpace(
        max_workers=2, cuda=True, channels_last_ok=True, opted_in=frozenset(opt_in_knobs())
    )
    for config in space.grid():
        DataLoader(range(4), batch_size=2, **config.dataloader_kwargs())  # raises if torch refuses


def test_labels_name_every_knob_and_read_back():
    space = SearchSpace(
        max_workers=3, cuda=True, channels_last_ok=True, opted_in=frozenset(opt_in_knobs())
    )
    configs = list(space.grid())
    assert len({c.label() for c in configs}) == len(configs)
    assert all(
        LoaderConfig.from_label(c.label()) == LoaderConfig.from_params(space.params(c))
        for c in configs
    )


def test_cost_order_starts_with_workers_then_prefetch():
    assert [k.name for k in cost_order()][:2] == ["num_workers", "prefetch_factor"]


@pytest.mark.parametrize("name", opt_in_knobs())
def test_an_opt_in_knob_is_searched_only_when_asked_for(name):
    plain = SearchSpace(max_workers=2, cuda=True, channels_last_ok=True)
    asked = SearchSpace(max_workers=2, cuda=True, channels_last_ok=True, opted_in=frozenset({name}))
    knob = BY_NAME[name]
    assert not plain.searches(name) and asked.searches(name)
    assert all(getattr(c, name) == knob.default for c in plain.grid())
    assert {getattr(c, name) for c in asked.grid() if c.num_workers > 0} == set(knob.values)
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial({"num_workers": 2})
    trial = study.ask()
    asked.suggest(trial)
    assert name in trial.params


def test_multiprocessing_context_is_a_choice_searched_when_asked_and_runs_a_spawned_burst():
    import torch

    from autotune.burst.runner import BurstSettings, run_burst
    from autotune.recipe.model import Recipe
    from autotune.space.knobs import START_METHODS
    from autotune.workload.simulated import SimSpec, simulated_workload

    knob = BY_NAME["multiprocessing_context"]
    assert knob.values[0] is None and set(knob.values[1:]) == set(START_METHODS) - {
        START_METHODS[0]
    }
    spawned = LoaderConfig(num_workers=1, multiprocessing_context="spawn")
    assert (
        spawned.label() == "w1 pf2 spawn"
        and LoaderConfig.from_label("w1 spawn").multiprocessing_context == "spawn"
    )
    assert spawned.dataloader_kwargs()["multiprocessing_context"] == "spawn"
    assert "multiprocessing_context" not in LoaderConfig(num_workers=2).dataloader_kwargs()
    assert LoaderConfig(num_workers=1, multiprocessing_context="vfork").problems(cuda=False) == [
        f"multiprocessing_context must be one of {', '.join(START_METHODS)}, not 'vfork'"
    ]
    with pytest.raises(ValueError, match="multiprocessing_context must be one of"):
        DataLoaderArgs(num_workers=1, multiprocessing_context="vfork")
    # Cheapest among ties: the platform's default start method.
    assert LoaderConfig(num_workers=1).cost_of(knob) < spawned.cost_of(knob)
    recipe = Recipe.from_config(
        spawned,
        measured={"samples_per_s": 1.0, "baseline_samples_per_s": 1.0, "speedup": 1.0},
        workload={},
        environment={},
    )
    assert recipe.dataloader(range(8), batch_size=2).multiprocessing_context is not None
    workload = simulated_workload(SimSpec(cpu_ms=0.1, step_ms=1, batch=8, length=256))
    result = run_burst(
        workload,
        spawned,
        torch.device("cpu"),
        BurstSettings(min_steps=4, min_seconds=0.05, max_seconds=0.5, warmup_steps=1),
    )
    assert result.samples > 0  # spawned workers re-imported the dataset's module and delivered


def test_the_space_says_why_each_knob_is_left_out():
    cpu = SearchSpace(max_workers=4, cuda=False, channels_last_ok=False)
    assert cpu.left_out() == {
        "pin_memory": "needs a CUDA device",
        "non_blocking": "needs a CUDA device",
        "channels_last": "needs 4-D floating-point inputs",
        "side_stream_prefetch": "needs a CUDA device",
        "in_order": "opt-in: --knob in_order searches it",
        "multiprocessing_context": "opt-in: --knob multiprocessing_context searches it",
    }
    everything = SearchSpace(
        max_workers=4, cuda=True, channels_last_ok=True, opted_in=frozenset(opt_in_knobs())
    )
    assert everything.left_out() == {}
    no_workers = SearchSpace(max_workers=0, cuda=True, channels_last_ok=True)
    assert no_workers.left_out()["prefetch_factor"] == "needs num_workers > 0"
