"""The knob registry drives the configuration, the space, the recipe, the report and the cost order."""

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
    assert set(schema["DataLoaderArgs"]["properties"]) | set(schema["TransferArgs"]["properties"]) \
        == set(names)


def test_dataloader_arguments_are_accepted_by_torch_at_every_grid_point():
    space = SearchSpace(max_workers=2, cuda=True, channels_last_ok=True,
                        opted_in=frozenset(opt_in_knobs()))
    for config in space.grid():
        DataLoader(range(4), batch_size=2, **config.dataloader_kwargs())  # raises if torch refuses


def test_labels_name_every_knob_and_read_back():
    space = SearchSpace(max_workers=3, cuda=True, channels_last_ok=True,
                        opted_in=frozenset(opt_in_knobs()))
    configs = list(space.grid())
    assert len({c.label() for c in configs}) == len(configs)
    assert all(LoaderConfig.from_label(c.label()) == LoaderConfig.from_params(space.params(c))
               for c in configs)


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
