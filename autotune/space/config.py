"""One point of the search space: the seven knobs and the rules that make a point valid."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

# Knob names are exactly the torch argument names they set (DataLoader / Tensor.to), plus the
# side-stream prefetcher. The first four go to DataLoader, the rest to the transfer wrapper.
DATALOADER_KNOBS = ("num_workers", "pin_memory", "prefetch_factor", "persistent_workers")
TRANSFER_KNOBS = ("non_blocking", "channels_last", "side_stream_prefetch")
KNOBS = DATALOADER_KNOBS + TRANSFER_KNOBS


@dataclass(frozen=True)
class LoaderConfig:
    num_workers: int = 0
    pin_memory: bool = False
    prefetch_factor: int | None = None
    persistent_workers: bool = False
    non_blocking: bool = False
    channels_last: bool = False
    side_stream_prefetch: bool = False

    def problems(self, *, cuda: bool, channels_last_ok: bool = True) -> list[str]:
        """Every rule this point breaks; empty when valid."""
        out = []
        if self.num_workers < 0:
            out.append("num_workers must be >= 0")
        if self.num_workers == 0 and self.prefetch_factor is not None:
            out.append("prefetch_factor needs num_workers > 0")
        if self.num_workers == 0 and self.persistent_workers:
            out.append("persistent_workers needs num_workers > 0")
        if self.prefetch_factor is not None and self.prefetch_factor < 1:
            out.append("prefetch_factor must be >= 1")
        if not cuda:
            for knob in ("pin_memory", "non_blocking", "side_stream_prefetch"):
                if getattr(self, knob):
                    out.append(f"{knob} needs a CUDA device")
        if self.channels_last and not channels_last_ok:
            out.append("channels_last needs 4-D floating-point inputs")
        return out

    def dataloader_kwargs(self) -> dict[str, Any]:
        """DataLoader arguments, only those valid for this num_workers."""
        kwargs: dict[str, Any] = {"num_workers": self.num_workers, "pin_memory": self.pin_memory}
        if self.num_workers > 0:
            if self.prefetch_factor is not None:
                kwargs["prefetch_factor"] = self.prefetch_factor
            kwargs["persistent_workers"] = self.persistent_workers
        return kwargs

    def transfer_kwargs(self) -> dict[str, bool]:
        return {k: getattr(self, k) for k in TRANSFER_KNOBS}

    @property
    def effective_prefetch_factor(self) -> int:
        """Batches each worker keeps in flight (torch's default is 2)."""
        return 0 if self.num_workers == 0 else (self.prefetch_factor or 2)

    @property
    def prefetch_depth(self) -> int:
        """Batches the workers can hold ready before the consumer asks: the buffer to drain."""
        return self.num_workers * self.effective_prefetch_factor

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> "LoaderConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def label(self) -> str:
        """Short human label, e.g. 'w4 pf2 persist pin nb cl stream'."""
        parts = [f"w{self.num_workers}"]
        if self.num_workers:
            parts.append(f"pf{self.effective_prefetch_factor}")
        for knob, short in (("persistent_workers", "persist"), ("pin_memory", "pin"),
                            ("non_blocking", "nb"), ("channels_last", "cl"),
                            ("side_stream_prefetch", "stream")):
            if getattr(self, knob):
                parts.append(short)
        return " ".join(parts)


PYTORCH_DEFAULTS = LoaderConfig()
