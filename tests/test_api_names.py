"""autotune.tune's keywords are `autotune tune`'s options by the same names; each old name is one
deprecated alias that still works, with a DeprecationWarning."""

from __future__ import annotations

import inspect
import warnings

import pytest
import typer.main

from autotune import api
from autotune.cli.app import app
from autotune.search.options import TuneOptions

# The API's own keywords that have no CLI option: objects a command line cannot pass.
API_ONLY = {"workload", "burst", "on_trial", "workload_factory", "deprecated"}
# A repeatable flag is one keyword taking them all.
REPEATED = {"knobs": "--knob"}


def _cli_flags() -> set[str]:
    command = typer.main.get_command(app).commands["tune"]
    return {opt for p in command.params for opt in [*p.opts, *getattr(p, "secondary_opts", [])]}


def test_every_keyword_is_a_cli_option_of_the_same_name():
    flags = _cli_flags()
    names = [n for n in inspect.signature(api.tune).parameters if n not in API_ONLY]
    missing = [n for n in names if REPEATED.get(n, f"--{n.replace('_', '-')}") not in flags]
    assert not missing, f"keywords of autotune.tune with no CLI option of that name: {missing}"


def test_the_defaults_are_the_options_models():
    fields = TuneOptions.model_fields
    for name, param in inspect.signature(api.tune).parameters.items():
        field = fields.get(api.FIELDS.get(name, name))
        if field is not None and name != "burst":
            assert param.default == field.get_default(call_default_factory=True), name


def _captured(monkeypatch) -> dict:
    seen: dict = {}
    monkeypatch.setattr(api, "tune_with", lambda workload, opts, **_: seen.setdefault("opts", opts))
    return seen


def test_the_new_names_make_the_options(monkeypatch):
    seen = _captured(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api.tune(None, budget=12, trials=3, ram_budget=512, study="s", results_dir=None)
    opts = seen["opts"]
    assert (opts.budget_s, opts.max_trials, opts.ram_budget_mib, opts.study_name) == (
        12,
        3,
        512,
        "s",
    )


@pytest.mark.parametrize(
    "old, new, value, field",
    [
        ("budget_s", "budget", 12.0, "budget_s"),
        ("max_trials", "trials", 3, "max_trials"),
        ("ram_budget_mib", "ram_budget", 512.0, "ram_budget_mib"),
        ("study_name", "study", "s", "study_name"),
    ],
)
def test_each_old_name_is_a_deprecated_alias(monkeypatch, old, new, value, field):
    seen = _captured(monkeypatch)
    with pytest.warns(DeprecationWarning, match=rf"{old}=.*use {new}="):
        api.tune(None, results_dir=None, **{old: value})
    assert getattr(seen["opts"], field) == value


def test_an_unknown_keyword_is_a_type_error(monkeypatch):
    _captured(monkeypatch)
    with pytest.raises(TypeError, match="unexpected keyword argument 'budjet'"):
        api.tune(None, budjet=3)
