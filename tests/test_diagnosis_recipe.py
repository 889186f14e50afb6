"""The recipe carries the tuned configuration's diagnosis and reads it back."""

import json

import pytest
import torch
from fakes import burst

from autotune.diagnosis import Context, explain
from autotune.errors import RecipeError
from autotune.recipe.build import build_recipe
from autotune.recipe.model import load_recipe
from autotune.search.trial import TrialRecord, TrialStatus


def _recipe():
    result = burst(wait=0.8, compute=0.2, busy=0.2)
    d = explain(
        result,
        [TrialRecord(0, result.config, TrialStatus.OK, result=result)],
        Context(usable_cpus=2),
    )
    return build_recipe(
        result, None, {"name": "fake"}, torch.device("cpu"), diagnosis=d.to_record()
    ), d


def test_recipe_diagnosis_round_trip(tmp_path):
    recipe, d = _recipe()
    loaded = load_recipe(recipe.save(tmp_path / "recipe.json"))
    assert loaded.diagnosis.bottleneck == "input"
    assert loaded.diagnosis.recommendations == d.recommendations
    assert loaded.diagnosis.evidence["shares_pct"]["copy"] is None
    assert loaded.diagnosis.evidence["reason"] == d.reason
    assert loaded == recipe


def test_measured_copy_share_is_null_on_cpu(tmp_path):
    recipe, _ = _recipe()
    data = json.loads(recipe.to_json())
    assert data["measured"]["copy_pct"] is None
    assert data["measured"]["data_wait_pct"] == 80.0
    assert data["measured"]["device_busy_pct"] == 20.0


def test_recipe_without_diagnosis_still_loads_and_a_bad_bottleneck_is_refused(tmp_path):
    recipe, _ = _recipe()
    data = json.loads(recipe.to_json())
    data.pop("diagnosis")
    (tmp_path / "plain.json").write_text(json.dumps(data))
    assert load_recipe(tmp_path / "plain.json").diagnosis is None
    data["diagnosis"] = {"bottleneck": "network", "evidence": {}, "recommendations": []}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(RecipeError, match="diagnosis.bottleneck"):
        load_recipe(tmp_path / "bad.json")


def test_show_prints_the_diagnosis(tmp_path):
    from typer.testing import CliRunner

    from autotune.cli.app import app

    recipe, d = _recipe()
    result = CliRunner().invoke(app, ["show", str(recipe.save(tmp_path / "recipe.json"))])
    assert result.exit_code == 0, result.output
    assert "bottleneck: input" in result.output
