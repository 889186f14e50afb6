"""What diagnosis reads of a tried configuration: a protocol it owns, so that it needs nothing
from the search above it (whose TrialRecord satisfies it)."""

from __future__ import annotations

from typing import Protocol

from autotune.decision.epoch_time import EpochParts
from autotune.space.config import LoaderConfig


class MeasuredConfig(Protocol):
    @property
    def config(self) -> LoaderConfig: ...

    @property
    def ok(self) -> bool: ...

    @property
    def samples_per_s(self) -> float | None: ...

    @property
    def span_s(self) -> float | None: ...

    @property
    def epoch_parts(self) -> EpochParts | None: ...
