"""The recipe: the tuned configuration as JSON, with field names exactly as torch spells them.

`DataLoader(ds, batch_size=b, **recipe["dataloader"])` always works on the JSON, because the
dataloader block only ever holds arguments valid for its num_workers.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final, Literal, cast

import torch
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_serializer,
    model_validator,
)
from torch.utils.data import DataLoader

from autotune.decision.thresholds import MAX_RECORD_BURSTS, RECORDED_WITHIN, TARGET
from autotune.errors import RecipeError, first_error, json_object
from autotune.made_by import this_commit
from autotune.probe.fetch import BatchedWay
from autotune.recipe.diagnosis_record import DiagnosisRecord
from autotune.recipe.strict import Strict as _Strict
from autotune.space.config import LoaderConfig
from autotune.space.knobs import Needs, Target, knobs_for, passed_to_torch
from autotune.space.start_method import import_what_workers_import
from autotune.strenum import StrEnum
from autotune.transfer.device_loader import DeviceLoader
from autotune.version import __version__
from autotune.workload.loader_args import kept_arguments

RECIPE_VERSION: Final = 1


def _fields(target: Target) -> dict[str, Any]:
    """The pydantic fields of `target`'s knobs, from the registry."""
    return {
        k.name: (k.annotation, Field(k.default, ge=k.minimum, description=k.doc))
        for k in knobs_for(target)
    }


class _LoaderArgsRules(_Strict):
    @model_validator(mode="after")
    def _valid_for_workers(self) -> _LoaderArgsRules:
        need = [k for k in knobs_for(Target.DATALOADER) if Needs.WORKERS in k.needs]
        workers: int = cast(Any, self).num_workers  # a field of the model made from the registry
        if workers == 0 and any(getattr(self, k.name) != k.default for k in need):
            names = [k.name for k in need]
            listed = " and ".join(filter(None, (", ".join(names[:-1]), names[-1])))
            raise ValueError(f"{listed} need num_workers > 0")
        for knob in knobs_for(Target.DATALOADER):
            value = getattr(self, knob.name)
            if knob.choices and value is not None and value not in knob.choices:
                raise ValueError(
                    f"{knob.name} must be one of {', '.join(knob.choices)} on this"
                    f" machine, not {value!r}"
                )
        return self

    @model_serializer(mode="wrap")
    def _only_valid(self, handler: Any) -> dict[str, Any]:
        # Exactly the arguments DataLoader takes for this num_workers.
        return passed_to_torch(handler(self), Target.DATALOADER)


# Fields named exactly as the DataLoader arguments and DeviceLoader options they set.
DataLoaderArgs = create_model(
    "DataLoaderArgs", __base__=_LoaderArgsRules, __module__=__name__, **_fields(Target.DATALOADER)
)
TransferArgs = create_model(
    "TransferArgs", __base__=_Strict, __module__=__name__, **_fields(Target.TRANSFER)
)


class RateSource(StrEnum):
    """Which bursts `samples_per_s` is the mean of."""

    RECORD = "record"  # measured after the choice, free of the selection's luck
    REMEASURED = "remeasured"  # the re-measurements the choice was made on (no time was left)


class FetchRecord(_Strict):
    """One batch fetched in the training process before the search: per item (`__getitem__` +
    collate_fn) against batched (the dataset's `__getitems__`, or a TensorDataset's tensors
    indexed with the batch's indices), on the same indices; what receiving a batch from a worker
    costs the training process (the 1-worker loader probe)."""

    items: int
    per_item_ms_per_item: float | None = None
    batched_ms_per_item: float | None = None  # null: no batched way, or not the same batch
    batched_way: BatchedWay | None = None
    per_item_overhead_ms: float | None = None  # per-item minus batched, per item
    per_item_share_pct: float | None = None  # of a per-item fetch, saved by the batched way
    fetch_ms_per_batch: float  # the way torch's fetcher takes, in the training process
    receive_ms_per_batch: float | None = None
    in_memory: bool  # items in microseconds, on a CPU: num_workers=0 is measured and re-measured
    workers_cannot_pay: bool  # receiving a batch costs the training process more than fetching it


def shown(value: float | None, fmt: str) -> str:
    """A measured figure as `fmt`, or n/a where it was not measured (null in the recipe)."""
    return "n/a" if value is None else format(value, fmt)


def speedup_text(value: float | None) -> str:
    """A speedup as a multiple ("2.31x"), or "speedup n/a" where none was measured: a bare "n/a"
    with an "x" after it would read as a number."""
    return "speedup n/a" if value is None else f"{value:.2f}x"


class Measured(BaseModel):
    """Figures measured on the tuning machine. A figure this machine cannot measure is null."""

    # Every field is declared; a field this version does not know (from a later version, or one
    # since dropped) is ignored on reading, so older and newer recipes load.
    model_config = ConfigDict(extra="ignore")

    # null where nothing was measured (an online run ended before a window completed)
    samples_per_s: float | None
    baseline_samples_per_s: float | None
    speedup: float | None
    data_wait_pct: float | None = None
    copy_pct: float | None = None
    compute_pct: float | None = None
    other_pct: float | None = None  # host work outside wait, copy and device compute
    device_busy_pct: float | None = None  # an emulated accelerator's busy share (simulations)
    target_rate_samples_per_s: float | None = None  # set when the step was a simulated accelerator
    gpu_util_pct: float | None = None
    gpu_mem_peak_mib: float | None = None
    host_cpu_pct: float | None = None
    peak_rss_mib: float | None = None  # summed over main process and workers
    peak_pss_mib: float | None = None  # the same with shared pages split: the real footprint
    startup_s: float | None = None
    trials: int | None = None
    tuning_s: float | None = None
    ram_budget_mib: float | None = None  # the RAM guard's budget during the offline search
    stop_reason: str | None = None  # why the offline search stopped
    # The offline search's counts beside `trials` (search/trial.py, trial_counts):
    remeasured: int | None = None  # re-measurements of the best few
    recorded: int | None = None  # record bursts of the chosen configuration, after the choice
    pruned: int | None = None  # trials stopped early by the pruner
    rejected: int | None = None  # trials measured over the RAM budget
    # The device probes' warm-up steps (CUDA/cuDNN loading and autotuning), within tuning_s but
    # outside the budget: a one-time cost the training's own first steps pay too.
    device_warmup_s: float | None = None
    device_ceiling_samples_per_s: float | None = None  # the step fed one on-device batch
    # The loader alone, no step, at the chosen configuration's DataLoader arguments.
    loader_ceiling_samples_per_s: float | None = None
    ceiling_share: float | None = None  # samples_per_s / min(the two ceilings)
    # The probes behind the ceilings: the device per memory layout, the loader per worker count
    # (torch's defaults otherwise) and at the chosen configuration's DataLoader arguments.
    probes: dict[str, Any] | None = None
    noise_pct: float | None = None  # relative std of one burst, from the re-measurements
    measurements: int | None = None  # bursts of the tuned configuration behind samples_per_s
    rate_from: RateSource | None = None  # which bursts those are
    # Z standard errors of samples_per_s, in % of it, at the measured burst noise
    # (decision/rate.py); the machine's drift between minutes comes on top. null: noise unknown.
    samples_per_s_error_pct: float | None = None
    fastest_samples_per_s: float | None = None  # the fastest configuration's mean rate
    # Configurations the measurements could not tell apart from the tuned one (it is the cheapest
    # of them), and the band, in % of the fastest's rate, within which they tie.
    tied_with: list[str] | None = None
    tie_band_pct: float | None = None
    ties_resolved: bool | None = None  # False: the budget ended before measuring could split them
    # Rounds in which the tied configurations were measured back to back (A, B, A, B) and compared
    # pair by pair, behind the band; 0 or null: compared on independent means.
    tie_pairs: int | None = None
    fetch: FetchRecord | None = None
    # Knobs the search left at their defaults, each with why (SearchSpace.left_out).
    not_searched: dict[str, str] | None = None
    # Online tuning (autotune.DataLoader): the training loop's steps spent exploring, the time
    # they lost against the chosen configuration (and as a share of their own time), and why
    # exploring stopped.
    exploration_steps: int | None = None
    exploration_cost_s: float | None = None
    exploration_cost_pct: float | None = None
    exploration_stop: str | None = None
    # False: the run ended (or was stopped) while exploring; the configuration is the best so far.
    exploration_complete: bool | None = None
    # Configurations that failed while tried (label -> the error), and an error of autotune's own
    # after which it stopped tuning (the training went on).
    failed_configurations: dict[str, str] | None = None
    tuning_error: str | None = None
    # What an online run took from the memory of earlier runs of its workload on this machine,
    # and how its check of the remembered choice went (online/memory.py).
    memory: str | None = None
    # Epoch accounting (burst/epoch.py): samples_per_s is the rate over whole epochs; these are
    # the tuned configuration's burst shown in the report (the one closest to the mean).
    steady_samples_per_s: float | None = None  # within an epoch, its boundary taken out
    first_batch_s: float | None = None  # iter() to an epoch's first batch: fresh pool or refill
    restart_cost_s: float | None = None  # one epoch boundary, over a steady step
    restart_share_pct: float | None = None  # of an epoch's time
    epoch_samples: int | None = None  # None: the loader has no length, restarts not counted
    # The worker range (decision/worker_range.py): its top when the search ended, and why there.
    max_workers_searched: int | None = None
    worker_range_grown_from: int | None = None  # the top it started at, where it grew
    worker_range_stop: str | None = None

    def epoch_note(self) -> str | None:
        """One sentence on what epoch boundaries cost the tuned configuration; None for a recipe
        recorded before epochs were counted."""
        if self.restart_cost_s is None:
            return None
        if not self.epoch_samples:
            return (
                "Epochs: the loader has no length, so epoch restarts are not counted: the"
                " rates assume epochs far longer than one restart"
                f" ({self.restart_cost_s:.2f} s measured)."
            )
        return (
            f"Over whole epochs: {self.epoch_samples} samples an epoch at"
            f" {self.steady_samples_per_s:.1f} samples/s steady, plus"
            f" {self.restart_cost_s:.2f} s restart cost per epoch ({self.restart_share_pct:.1f}%"
            f" of the epoch; iter() to first batch {self.first_batch_s:.2f} s); the rates"
            " count it."
        )

    def range_note(self) -> str | None:
        """Where the worker range ended and why; None for a recipe recorded without it."""
        if self.max_workers_searched is None:
            return None
        grown = (
            f" (grown from 0-{self.worker_range_grown_from})"
            if self.worker_range_grown_from is not None
            else ""
        )
        return (
            f"Worker range searched: 0-{self.max_workers_searched}{grown}; it stopped there:"
            f" {self.worker_range_stop or 'n/a'}."
        )

    def error_note(self) -> str | None:
        """One sentence on how far the tuned figure may be off; None where its noise is unknown."""
        if self.samples_per_s_error_pct is None or not self.measurements:
            return None
        bursts = f"{self.measurements} burst{'s' if self.measurements > 1 else ''}"
        noise = "" if self.noise_pct is None else f", burst noise {self.noise_pct:.1f}%"
        said = (
            f"The tuned figure's error from burst noise is ±{self.samples_per_s_error_pct:.1f}%"
            f" (two standard errors of {bursts} of it{noise}); the machine's drift between"
            " minutes comes on top"
        )
        if self.measurements > 1 and self.samples_per_s_error_pct <= 100 * RECORDED_WITHIN:
            return f"{said}."
        if self.measurements < MAX_RECORD_BURSTS:
            return f"{said}: a longer --budget leaves time to measure it more."
        return (
            f"{said}: the bursts scatter that much here; `autotune verify` measures the"
            " configuration in long plain-loop windows."
        )

    def tie_note(self, label: str) -> str | None:
        """One sentence on the configurations tied with the tuned one `label`; None if none."""
        if not self.tied_with:
            return None
        others = ", ".join(f"`{other}`" for other in self.tied_with)
        noise = "n/a" if self.noise_pct is None else f"{self.noise_pct:.1f}%"
        how = (
            f"measured alternately in {self.tie_pairs} rounds, pair by pair"
            if self.tie_pairs
            else f"burst noise {noise}"
        )
        said = (
            f"Tied within noise: `{label}` could not be told apart from {others} (band"
            f" {self.tie_band_pct:.1f}% of the fastest, {how});"
        )
        if self.ties_resolved:
            return f"{said} it is the cheapest of them."
        return (
            f"{said} the budget ended before more measurements could split them, so it is the"
            f" cheapest of those within {100 * TARGET:g}% of the fastest; a longer --budget would"
            " settle it."
        )


class MadeBy(_Strict):
    """The autotune that wrote a recipe."""

    version: str
    commit: str | None = None  # git commit where it ran from a checkout; null: an installed package

    @classmethod
    def this(cls) -> MadeBy:
        return cls(version=__version__, commit=this_commit())


class Recipe(_Strict):
    # The JSON key is "dataloader"; in Python that name is the method that builds one.
    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    autotune_recipe: Literal[1] = RECIPE_VERSION
    loader_args: DataLoaderArgs = Field(alias="dataloader")
    transfer: TransferArgs
    measured: Measured
    workload: dict[str, Any]
    environment: dict[str, Any]
    diagnosis: DiagnosisRecord | None = None
    made_by: MadeBy | None = None  # null in recipes written before it was recorded
    created: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    @classmethod
    def from_config(cls, config: LoaderConfig, **fields: Any) -> Recipe:
        fields.setdefault("made_by", MadeBy.this())
        return cls(
            loader_args=DataLoaderArgs(**config.dataloader_kwargs()),
            transfer=TransferArgs(**config.transfer_kwargs()),
            **fields,
        )

    @property
    def config(self) -> LoaderConfig:
        return LoaderConfig(**self.loader_args.model_dump(), **self.transfer.model_dump())

    def dataloader_kwargs(self) -> dict[str, Any]:
        return self.loader_args.model_dump()

    def dataloader(
        self, dataset: Any, batch_size: int | None = None, **overrides: Any
    ) -> DataLoader:
        """A torch DataLoader with the recipe's arguments; `overrides` win (shuffle, sampler, ...).
        Given an existing DataLoader instead of a dataset, the new one keeps everything that loader
        was built with (sampler, batch_sampler, collate_fn, drop_last, worker_init_fn, generator)
        and takes the recipe's knobs."""
        knobs = {**self.dataloader_kwargs(), **overrides}
        import_what_workers_import(knobs.get("num_workers", 0))
        if isinstance(dataset, DataLoader):
            return DataLoader(**{**kept_arguments(dataset), **knobs})
        if batch_size is None:
            raise RecipeError(
                "recipe.dataloader(dataset, batch_size): give the batch size, or pass"
                " an existing DataLoader instead of a dataset"
            )
        return DataLoader(dataset, batch_size=batch_size, **knobs)

    def wrap(self, loader: Any, device: str | torch.device = "cuda") -> DeviceLoader:
        """Iterate `loader` with batches moved to `device` using the recipe's transfer knobs."""
        return DeviceLoader(loader, device, **self.transfer.model_dump())

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json())
        return path


def load_recipe(path: str | Path) -> Recipe:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise RecipeError(f"cannot read recipe {path}: {exc.strerror or exc}") from None
    data = json_object(text, str(path), RecipeError, "a recipe")
    version = data.get("autotune_recipe")
    if version != RECIPE_VERSION:
        raise RecipeError(
            f"{path}: unsupported autotune_recipe version {version!r}"
            f" (this autotune reads version {RECIPE_VERSION})"
        )
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        raise RecipeError(f"{path}: {first_error(exc, 'recipe')}") from None
