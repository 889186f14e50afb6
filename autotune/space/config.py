"""One point of the search space: a value for every knob of the registry (knobs.py), and the rules
that make a point valid. The dataclass declares the registry's knobs as typed fields, in its order
and with its defaults; the rules read the registry."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from autotune.space.knobs import BY_NAME, KNOBS, Facts, Kind, Knob, Needs, Target, passed_to_torch

KNOB_NAMES = tuple(k.name for k in KNOBS)


def _default(name: str) -> Any:
    return field(default=BY_NAME[name].default)


@dataclass(frozen=True)
class LoaderConfig:
    """A value for every knob; fields named exactly as the torch arguments, typed and in the
    registry's order, with its defaults (tests/test_knobs.py checks that they agree)."""

    num_workers: int = _default("num_workers")
    pin_memory: bool = _default("pin_memory")
    prefetch_factor: int | None = _default("prefetch_factor")
    persistent_workers: bool = _default("persistent_workers")
    non_blocking: bool = _default("non_blocking")
    channels_last: bool = _default("channels_last")
    side_stream_prefetch: bool = _default("side_stream_prefetch")
    in_order: bool = _default("in_order")
    multiprocessing_context: str | None = _default("multiprocessing_context")

    def problems(self, *, cuda: bool, channels_last_ok: bool = True) -> list[str]:
        """Every rule this point breaks; empty when valid."""
        facts = Facts(workers=self.num_workers > 0, cuda=cuda, image_batch=channels_last_ok)
        out: list[str] = []
        for knob in KNOBS:
            value = getattr(self, knob.name)
            if knob.minimum is not None and value is not None and value < knob.minimum:
                out.append(f"{knob.name} must be >= {knob.minimum}")
            if knob.kind is Kind.CHOICE and value is not None and value not in knob.choices:
                out.append(f"{knob.name} must be one of {', '.join(knob.choices)}, not {value!r}")
            if value != knob.default:
                out += [f"{knob.name} needs {need}" for need in knob.needs if not facts.meets(need)]
        return out

    def dataloader_kwargs(self) -> dict[str, Any]:
        """DataLoader arguments, only those valid for this num_workers."""
        return passed_to_torch(self.as_dict(), Target.DATALOADER)

    def with_knob(self, name: str, value: Any) -> LoaderConfig:
        """This configuration with the knob named `name` (read from the registry) at `value`."""
        change: dict[str, Any] = {name: value}
        return replace(self, **change)

    def loader_part(self) -> LoaderConfig:
        """This configuration with only its DataLoader arguments kept, the rest at their defaults:
        what the loader alone, with no step, runs as (the loader ceiling). prefetch_factor at its
        effective value, so that torch's default and its explicit 2 are one loader."""
        part = LoaderConfig(**self.dataloader_kwargs())
        return replace(part, prefetch_factor=part.effective_prefetch_factor or None)

    def transfer_kwargs(self) -> dict[str, Any]:
        return passed_to_torch(self.as_dict(), Target.TRANSFER)

    def cost_of(self, knob: Knob) -> float:
        """What `knob`'s value costs (the registry's `cost`): nothing where it has no effect."""
        if Needs.WORKERS in knob.needs and self.num_workers == 0:
            return 0.0
        return knob.cost(knob.effective(getattr(self, knob.name)))

    @property
    def effective_prefetch_factor(self) -> int:
        """Batches each worker keeps in flight (torch's default is 2)."""
        return (
            0
            if self.num_workers == 0
            else BY_NAME["prefetch_factor"].effective(self.prefetch_factor)
        )

    def same_pool(self, other: LoaderConfig) -> bool:
        """A running pool of this configuration runs `other` with its workers kept: it has
        workers, `other` names its depth, and every other knob is equal but persistent_workers,
        which `other` may turn on, not off. The online loader changes a running pool's depth in
        place and keeps a pool past its epoch's end (online/inner.py, redepth and
        keep_past_epoch); a pool cannot be made to stop at the end it was kept for."""
        return (
            self.num_workers > 0
            and other.prefetch_factor is not None
            and (other.persistent_workers or not self.persistent_workers)
            and replace(
                self,
                prefetch_factor=other.prefetch_factor,
                persistent_workers=other.persistent_workers,
            )
            == other
        )

    @property
    def prefetch_depth(self) -> int:
        """Batches the workers can hold ready before the consumer asks: the buffer to drain."""
        return self.num_workers * self.effective_prefetch_factor

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> LoaderConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def label(self) -> str:
        """Short human label, e.g. 'w4 pf2 pin persist nb cl stream': counts first, then the
        flags that are set, each in the registry's order."""
        shown = [k for k in KNOBS if self.num_workers > 0 or Needs.WORKERS not in k.needs]
        ordered = sorted(shown, key=lambda k: k.kind is not Kind.COUNT)
        return " ".join(t for k in ordered if (t := k.label(getattr(self, k.name))) is not None)

    @classmethod
    def from_label(cls, label: str) -> LoaderConfig:
        """The configuration a label names ('w8 pf4 persist'); the knobs it omits at their
        defaults. ValueError on a token no knob has; validity is for `problems`."""
        return cls(**label_values(label))


def label_values(label: str) -> dict[str, Any]:
    """The knob values a label names, by knob name."""
    values: dict[str, Any] = {}
    for token in label.split():
        knob, value = _parse_token(token)
        if knob.name in values:
            raise ValueError(f"{token!r} repeats {knob.name}")
        values[knob.name] = value
    return values


def _parse_token(token: str) -> tuple[Knob, Any]:
    for knob in KNOBS:
        if knob.kind is Kind.COUNT and (m := re.fullmatch(rf"{knob.short}(\d+)", token)):
            return knob, int(m.group(1))
        if knob.kind is Kind.FLAG and token == knob.short:
            return knob, not knob.default
        if knob.kind is Kind.CHOICE and token in knob.choices:
            return knob, token
    raise ValueError(f"{token!r} is no knob's label")


PYTORCH_DEFAULTS = LoaderConfig()
