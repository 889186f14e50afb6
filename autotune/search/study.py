"""Creating the optuna study that drives the search."""

from __future__ import annotations

import warnings

import optuna

from autotune.space.config import LoaderConfig


def open_study(*, seed: int | None, storage: str | None = None,
               study_name: str | None = None) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        # multivariate/group are marked experimental, and are what a conditional space needs.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=6, multivariate=True,
                                             group=True)
    return optuna.create_study(direction="maximize", sampler=sampler, storage=storage,
                               study_name=study_name, load_if_exists=True)


def params_of(config: LoaderConfig, suggested: dict) -> dict:
    """The optuna params that reproduce `config` (only the knobs the space asked for)."""
    return {k: getattr(config, k) for k in suggested}
