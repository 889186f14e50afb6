"""The online loader's options: keywords of `autotune.DataLoader(..., online={...})`, over the
JSON in the AUTOTUNE_ONLINE environment variable (what `autotune run` sets), over the defaults."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from autotune.errors import OptionsError, first_error, json_object
from autotune.memory import OFF as MEMORY_OFF

ENV_VAR = "AUTOTUNE_ONLINE"
# The knobs autotune.DataLoader tunes (the others stay as given). Defined here, not beside the
# climb: `autotune run` validates its options without importing torch.
TUNED = ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")


class Notices(str, Enum):
    """The lines autotune.DataLoader prints for the user (online/notice.py)."""

    ALL = "all"  # when the loader settles, and at exit
    SETTLED = "settled"  # when it settles only: `autotune run` prints the final reports itself
    NONE = "none"


class OnlineOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # False: the loader runs the arguments it was given, like torch's
    # Knobs kept at the value passed (or torch's default); the others start there and are tuned.
    fixed: tuple[str, ...] = ()
    results_dir: Path | None = Path("results")  # None: nothing is written at exit
    name: str | None = None  # names the run folder; default: the dataset's class
    # The exploration bound: exploring may lose this share of the horizon's time (below) against
    # the best configuration measured so far (at that best's rate).
    max_explore_share: float = Field(0.1, gt=0, le=1)
    # The least horizon in steps: exploring spans the first epoch, or as many epochs as make up
    # this many steps where they are shorter (or have no length).
    max_explore_steps: int = Field(600, ge=1)
    # The training's length, where the script knows it: in steps (a framework's max_steps), or in
    # epochs of len(loader) steps. Exploring then stops where what it can still gain in the steps
    # left is less than what it costs, and a short run measures in shorter windows.
    total_steps: int | None = Field(None, ge=1)
    epochs: int | None = Field(None, ge=1)
    # The most workers tried. Default: the range starts at 4 per usable CPU (at most 32) and grows
    # while the workers wait rather than compute (decision/worker_range.py), up to 64.
    max_workers: int | None = Field(None, ge=0)
    # Steps per measurement window; at least num_workers x prefetch_factor (one convoy); at most 3
    # at num_workers=0, where there is no convoy.
    window_steps: int = Field(8, ge=2)
    window_s: float = Field(0.1, ge=0)  # and at least this long, within the epoch's room
    warmup_steps: int = Field(5, ge=0)  # the run's first steps, never measured
    min_windows: int = Field(2, ge=2)  # a configuration's windows before it is judged
    max_windows: int = Field(6, ge=2)  # after which a candidate within the band counts as tied
    cuda: bool | None = None  # pin_memory is tuned where CUDA is used (default: it is available)
    # Where the script set no `timeout`: the most a configuration the tuner chose waits for one
    # batch before it counts as failed (a hung worker) and the configuration the script gave
    # takes over. The script's own configuration keeps torch's behaviour: no timeout.
    candidate_timeout_s: float = Field(300.0, gt=0)
    # The one-line notices on stderr (or your logging handlers), rank 0 only: "all" (when the
    # loader settles, and at exit), "settled", or "none". AUTOTUNE_QUIET=1 is "none".
    notices: Notices = Notices.ALL
    # The memory of earlier runs of the same workload on this machine (online/memory.py): a
    # folder, or False for none. Default: $AUTOTUNE_MEMORY (a folder, or `off`), else the
    # user's cache (~/.cache/autotune/memory on Linux).
    memory: Path | bool | None = None

    @field_validator("memory", mode="before")
    @classmethod
    def _memory(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in MEMORY_OFF:
            return False
        return None if value is True else value

    @field_validator("fixed", mode="before")
    @classmethod
    def _known_knobs(cls, value: Any) -> Any:
        names = (value,) if isinstance(value, str) else tuple(value)
        unknown = [n for n in names if n not in TUNED]
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a knob autotune.DataLoader tunes ({', '.join(TUNED)})"
            )
        return names

    @model_validator(mode="after")
    def _one_length(self) -> OnlineOptions:
        if self.total_steps is not None and self.epochs is not None:
            raise ValueError("give the training's length once: total_steps or epochs, not both")
        return self


def resolve(
    given: OnlineOptions | Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
) -> OnlineOptions:
    """The options in force: `given` (keywords) over the environment's JSON over the defaults.
    One-line OptionsError on anything unusable."""
    env = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    if text := env.get(ENV_VAR):
        merged.update(json_object(text, ENV_VAR, OptionsError, "online options"))
    if isinstance(given, OnlineOptions):
        merged.update(given.model_dump(exclude_unset=True))
    elif given is not None:
        merged.update(given)
    try:
        return OnlineOptions.model_validate(merged)
    except ValidationError as exc:
        raise OptionsError(
            f"autotune.DataLoader online option {first_error(exc, 'options')}"
        ) from None
