import json

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import autotune
from autotune.errors import RecipeError
from autotune.recipe.model import Recipe
from autotune.space.config import LoaderConfig

MEASURED = {"samples_per_s": 300.0, "baseline_samples_per_s": 150.0, "speedup": 2.0}


def _recipe(config: LoaderConfig) -> Recipe:
    return Recipe.from_config(
        config,
        measured=MEASURED,
        workload={"name": "t", "batch_size": 4},
        environment={"usable_cpus": 2, "gpu": None},
    )


def _write(tmp_path, data) -> str:
    path = tmp_path / "r.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def test_round_trip(tmp_path):
    recipe = _recipe(
        LoaderConfig(num_workers=3, prefetch_factor=4, persistent_workers=True, channels_last=True)
    )
    loaded = autotune.load_recipe(recipe.save(tmp_path / "r.json"))
    assert loaded == recipe
    assert loaded.config == recipe.config


def test_json_keys_are_torch_argument_names(tmp_path):
    data = json.loads(_recipe(LoaderConfig(num_workers=2, prefetch_factor=2)).to_json())
    assert list(data) == [
        "autotune_recipe",
        "dataloader",
        "transfer",
        "measured",
        "workload",
        "environment",
        "diagnosis",
        "made_by",
        "created",
    ]
    assert data["dataloader"] == {
        "num_workers": 2,
        "pin_memory": False,
        "prefetch_factor": 2,
        "persistent_workers": False,
    }
    assert data["transfer"] == {
        "non_blocking": False,
        "channels_last": False,
        "side_stream_prefetch": False,
    }
    assert data["measured"]["gpu_util_pct"] is None  # unknown on CPU, never 0


def test_dataloader_block_always_valid_for_torch(tmp_path):
    dataset = TensorDataset(torch.arange(8.0))
    for config in (LoaderConfig(), LoaderConfig(num_workers=1, prefetch_factor=3)):
        data = json.loads(_recipe(config).to_json())
        loader = DataLoader(dataset, batch_size=4, **data["dataloader"])
        assert len(list(loader)) == 2


def test_api_builds_and_wraps_a_loader(tmp_path):
    recipe = autotune.load_recipe(
        _recipe(LoaderConfig(num_workers=1, channels_last=True)).save(tmp_path / "r.json")
    )
    dataset = TensorDataset(torch.ones(8, 3, 4, 4), torch.arange(8))
    loader = recipe.dataloader(dataset, 4, shuffle=False)
    assert isinstance(loader, DataLoader) and loader.num_workers == 1 and loader.batch_size == 4
    images, labels = next(iter(recipe.wrap(loader, "cpu")))
    assert images.is_contiguous(memory_format=torch.channels_last)
    assert labels.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ({"autotune_recipe": 2}, "unsupported autotune_recipe version 2"),
        ({"autotune_recipe": 1}, "dataloader: Field required"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, content, message):
    with pytest.raises(RecipeError, match=message) as info:
        autotune.load_recipe(_write(tmp_path, content))
    assert "\n" not in str(info.value)


def _valid_dict():
    return json.loads(_recipe(LoaderConfig(num_workers=2)).to_json())


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["dataloader"].update(num_workers=-1), "dataloader.num_workers"),
        (
            lambda d: d["dataloader"].update(batch_sz=3),
            "dataloader.batch_sz: Extra inputs are not permitted",
        ),
        (lambda d: d.update(colour="red"), "colour: Extra inputs are not permitted"),
        (
            lambda d: d["dataloader"].update(num_workers=0, persistent_workers=True),
            "need num_workers > 0",
        ),
        (lambda d: d["transfer"].update(non_blocking="maybe"), "transfer.non_blocking"),
        (lambda d: d["measured"].pop("samples_per_s"), "measured.samples_per_s: Field required"),
        (lambda d: d["dataloader"].update(prefetch_factor=0), "dataloader.prefetch_factor"),
    ],
)
def test_each_validation_error_names_the_field(tmp_path, mutate, message):
    data = _valid_dict()
    mutate(data)
    with pytest.raises(RecipeError, match=message):
        autotune.load_recipe(_write(tmp_path, data))


def test_missing_file(tmp_path):
    with pytest.raises(RecipeError, match="cannot read recipe"):
        autotune.load_recipe(tmp_path / "nope.json")


def test_committed_examples_and_schema_are_current():
    from pathlib import Path

    from autotune.recipe.schema import recipe_schema

    recipes = Path(__file__).resolve().parent.parent / "recipes"
    assert json.loads((recipes / "recipe.schema.json").read_text()) == recipe_schema()
    examples = sorted(recipes.glob("example-*.json"))
    assert examples
    for path in examples:
        autotune.load_recipe(path)
