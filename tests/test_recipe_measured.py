"""The recipe's measured block: one typed builder (recipe/measured.py) for the offline search and
online tuning, every field declared, and recipes written by earlier versions still read."""

import json
import subprocess
import typing
from pathlib import Path

import pytest
import torch
from fakes import burst

from autotune.online.finish import Outcome
from autotune.online.meter import Ledger
from autotune.online.options import TUNED
from autotune.online.policy import HillClimb
from autotune.recipe.build import build_recipe, measured_block
from autotune.recipe.measured import DERIVED, build_measured
from autotune.recipe.model import FetchRecord, Measured, RateSource, Recipe, load_recipe
from autotune.space.config import LoaderConfig
from tests.test_online_policy import Loop, _settings

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


def _offline() -> Recipe:
    counts = {"trials": 3, "remeasured": 4, "recorded": 1, "pruned": 0, "rejected": 0}
    search = {
        "stop_reason": "no gain",
        "ram_budget_mib": 1024.04,
        "fastest_samples_per_s": 1600.004,
    }
    best, baseline = burst(wait=0.5, compute=0.5), burst(wait=0.8, compute=0.2, rate=100.0)
    return build_recipe(
        best, baseline, {"name": "fake"}, CPU, noise_cv=0.0412345, **counts, **search
    )


def _online() -> Outcome:
    climb = HillClimb(LoaderConfig(), TUNED, _settings())
    Loop(fetch_s=0.083, convoy=0.15).run(climb, limit=60)
    return Outcome.of(climb, Ledger(), {"name": "fake"}, 32, CPU)


def test_both_paths_build_the_same_model_and_leave_what_they_cannot_measure_null():
    offline, online = _offline().measured, _online().recipe().measured
    assert type(offline) is type(online) is Measured
    # Each carries its own driver's figures; the other's are null, never 0.
    assert offline.remeasured == 4 and offline.exploration_steps is None
    assert online.exploration_steps is not None and online.remeasured is None
    assert online.copy_pct is None and online.peak_rss_mib is None and online.stop_reason is None
    # Derived and rounded in one place: the speedup and the noise in %.
    assert offline.speedup == round(offline.samples_per_s / offline.baseline_samples_per_s, 3)
    assert offline.noise_pct == 4.12 and offline.ram_budget_mib == 1024.0
    assert offline.fastest_samples_per_s == 1600.0
    assert online.samples_per_s is not None and online.speedup is not None


def test_no_baseline_means_no_speedup_rather_than_an_invented_one():
    m = measured_block(burst(), None)
    assert m.samples_per_s is not None
    assert m.baseline_samples_per_s is None and m.speedup is None
    assert build_measured(samples_per_s=None, baseline_samples_per_s=100.0).speedup is None


def test_the_builder_refuses_a_name_that_is_not_a_field_or_is_derived():
    with pytest.raises(TypeError, match="remeasurd"):
        build_measured(samples_per_s=1.0, baseline_samples_per_s=1.0, remeasurd=3)
    for name in DERIVED:
        with pytest.raises(TypeError, match=name):
            build_measured(samples_per_s=1.0, baseline_samples_per_s=1.0, **{name: 2.0})


def _value(annotation):
    """A non-null value of a field's type."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    kind = args[0] if args else annotation
    origin = typing.get_origin(kind)
    if kind is bool:
        return True
    if kind is int:
        return 7
    if kind is float:
        return 1.5
    if kind is str:
        return "text"
    if kind is RateSource:
        return RateSource.RECORD
    if kind is FetchRecord:
        return FetchRecord(
            items=32, fetch_ms_per_batch=3.0, in_memory=False, workers_cannot_pay=False
        )
    if origin is list:
        return ["a"]
    if origin is dict:
        return {"a": "b"}
    raise AssertionError(f"no value for {annotation}")


def test_a_round_trip_keeps_every_field(tmp_path):
    figures = {
        name: _value(field.annotation)
        for name, field in Measured.model_fields.items()
        if name not in DERIVED and name not in ("samples_per_s", "baseline_samples_per_s")
    }
    m = build_measured(samples_per_s=3.0, baseline_samples_per_s=1.5, noise_cv=0.1, **figures)
    recipe = Recipe.from_config(LoaderConfig(), measured=m, workload={}, environment={})
    loaded = load_recipe(recipe.save(tmp_path / "recipe.json"))
    assert loaded.measured == m
    assert all(v is not None for v in loaded.measured.model_dump().values())
    assert not loaded.measured.model_extra  # nothing reached past the declared fields


def _committed_recipes() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.json"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    paths = [REPO / p for p in listed if p.endswith(".json") and not p.endswith("schema.json")]
    recipes = [json.loads(p.read_text()) for p in paths]
    # Only the measured block's reading is at stake here: a recipe whose top level this version
    # refuses (a raw one with a `provenance` block) is left out.
    top = {f.alias or name for name, f in Recipe.model_fields.items()}
    return [
        p for p, d in zip(paths, recipes, strict=True) if "autotune_recipe" in d and set(d) <= top
    ]


def test_recipes_written_by_earlier_versions_still_load(tmp_path):
    committed = _committed_recipes()
    assert committed, "the repository keeps example recipes"
    for path in committed:
        recipe, raw = load_recipe(path), json.loads(path.read_text())["measured"]
        m = recipe.measured
        assert not m.model_extra
        # Their once-undeclared figures (remeasured, probes, stop_reason, ...) read as fields.
        for name in ("remeasured", "pruned", "probes", "stop_reason", "ram_budget_mib"):
            if name in raw:
                assert getattr(m, name) == raw[name], (path, name)
    # An old recipe, as the current writer leaves it but with the figures as earlier versions
    # wrote them, plus one no version declares now: it loads, the unknown one dropped.
    data = json.loads(_offline().to_json())
    data["measured"].update(remeasured=5, recorded=2, probes={"device_samples_per_s": 9.0})
    data["measured"]["budget_s"] = 60  # a figure since dropped
    del data["made_by"], data["measured"]["epoch_samples"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = load_recipe(tmp_path / "old.json").measured
    assert old.remeasured == 5 and old.recorded == 2 and old.probes["device_samples_per_s"] == 9.0
    assert old.epoch_samples is None and not old.model_extra and "budget_s" not in old.model_dump()


def test_the_package_reads_no_field_through_model_extra():
    users = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "autotune").rglob("*.py")
        if "model_extra" in p.read_text()
    ]
    assert users == []
