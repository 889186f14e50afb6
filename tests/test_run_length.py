"""The training's length read off a framework up the stack (run_length.py), on stand-ins that
look like Lightning's and transformers' trainers to it (their module and attributes); the real
frameworks run in tests/test_online_frameworks.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import autotune
from autotune.online import run_length
from autotune.online.run_length import RunLength, from_stack


@pytest.fixture(autouse=True)
def _this_file_is_a_framework(monkeypatch):
    """The stand-ins below live here: their methods are looked into as a framework's are."""
    monkeypatch.setattr(
        run_length, "framework_dirs", lambda: (str(Path(__file__).resolve().parent),)
    )


class Trainer:  # Lightning's: max_steps and max_epochs are properties of the class
    __module__ = "lightning.pytorch.trainer.trainer"

    def __init__(self, max_steps=-1, max_epochs=None, accumulate_grad_batches=1):
        self._steps, self._epochs = max_steps, max_epochs
        self.accumulate_grad_batches = accumulate_grad_batches

    @property
    def max_steps(self):
        return self._steps

    @property
    def max_epochs(self):
        return self._epochs

    def run(self, body):
        return body()


class FitLoop:  # holds its trainer
    __module__ = "lightning.pytorch.loops.fit_loop"

    def __init__(self, trainer):
        self.trainer = trainer

    def run(self, body):
        return body()


class DetachedModule:  # a LightningModule with no trainer raises on .trainer
    __module__ = "lightning.pytorch.core.module"

    @property
    def trainer(self):
        raise RuntimeError("not attached to a Trainer")

    def run(self, body):
        return body()


class HFTrainer:
    __module__ = "transformers.trainer"

    def __init__(self, **args):
        self.args = SimpleNamespace(
            **{"max_steps": -1, "num_train_epochs": 3.0, "gradient_accumulation_steps": 1, **args}
        )

    def run(self, body):
        return body()


def _seen_from(owner):
    return owner.run(lambda: from_stack())


def test_lightnings_max_steps_count_accumulated_batches():
    assert _seen_from(Trainer(max_steps=50, accumulate_grad_batches=4)) == RunLength(
        200, None, "Lightning's max_steps"
    )
    assert _seen_from(FitLoop(Trainer(max_epochs=3))) == RunLength(
        None, 3, "Lightning's max_epochs"
    )


def test_no_length_where_none_is_set_or_no_trainer_is_attached():
    assert _seen_from(Trainer(max_epochs=-1)) is None  # Lightning's "train forever"
    assert _seen_from(DetachedModule()) is None
    assert from_stack() is None  # no framework here


def test_transformers_epochs_and_max_steps():
    assert _seen_from(HFTrainer()) == RunLength(None, 3, "transformers' num_train_epochs")
    assert _seen_from(HFTrainer(num_train_epochs=1.5)) == RunLength(
        None, 2, "transformers' num_train_epochs"
    )
    assert _seen_from(HFTrainer(max_steps=100, gradient_accumulation_steps=2)) == RunLength(
        200, None, "transformers' max_steps"
    )
    assert RunLength(None, 3, "x").steps(16) == 48 and RunLength(None, 3, "x").steps(None) is None


def _first_epoch_total(owner, **online):
    loader = autotune.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(64)),
        batch_size=4,
        online={"results_dir": None, **online},
    )

    def fit():
        it = iter(loader)
        next(it)
        return loader._session.policy.settings

    return owner.run(fit)


def test_the_loaders_first_epoch_reads_the_framework_and_the_options_win():
    s = _first_epoch_total(FitLoop(Trainer(max_epochs=10)))
    assert (s.total_steps, s.total_source) == (160, "Lightning's max_epochs")
    s = _first_epoch_total(HFTrainer(), total_steps=99)
    assert (s.total_steps, s.total_source) == (99, "the script's online options")
    s = _first_epoch_total(SimpleNamespace(run=lambda body: body()))
    assert s.total_steps is None


def test_only_a_frameworks_own_frames_are_looked_into(monkeypatch):
    monkeypatch.setattr(run_length, "framework_dirs", lambda: ())
    assert _seen_from(Trainer(max_steps=50)) is None  # no framework imported: no stack walk
    monkeypatch.setattr(run_length, "framework_dirs", lambda: ("/nowhere",))
    assert _seen_from(Trainer(max_steps=50)) is None  # the trainer's method is not a framework's
