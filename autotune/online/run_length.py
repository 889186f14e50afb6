"""The training's length, where the script says it (OnlineOptions.total_steps or epochs) or a
framework running the loader knows it: Lightning's Trainer (max_steps, else max_epochs) and
transformers' Trainer (args.max_steps, else args.num_train_epochs). The framework's settings are
read off the stack when the loader's first epoch starts (its fit loop is then the caller), by
attribute, never executed; neither framework is imported. A framework's steps count optimizer
steps: each takes as many batches as gradients are accumulated over."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

# Lightning's fit loop calls iter() some 20 frames below Trainer.fit.
STACK_DEPTH = 60
FRAMEWORKS = ("lightning", "pytorch_lightning", "transformers")


@dataclass(frozen=True)
class RunLength:
    total_steps: int | None  # batches in all
    epochs: int | None  # or this many epochs of len(loader)
    source: str  # where it was read

    def steps(self, epoch_steps: int | None) -> int | None:
        if self.total_steps is not None:
            return self.total_steps
        if self.epochs is not None and epoch_steps is not None:
            return self.epochs * epoch_steps
        return None


def given(total_steps: int | None, epochs: int | None) -> RunLength | None:
    if total_steps is None and epochs is None:
        return None
    return RunLength(total_steps, epochs, "the script's online options")


def framework_dirs() -> tuple[str, ...]:
    """The folders of the frameworks this process imported (none: nothing to look for)."""
    dirs = []
    for name in FRAMEWORKS:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(str(Path(path).resolve().parent))
    return tuple(dirs)


def from_stack(frame: FrameType | None = None) -> RunLength | None:
    """The first framework trainer (or an object holding one) found as `self` up the stack.
    Only a framework's own methods are looked into: reading a frame's locals makes CPython (before
    3.13) keep a snapshot of them for the frame's life, and a snapshot of the script's frame kept
    objects alive that the script had deleted."""
    dirs = framework_dirs()
    if not dirs:
        return None
    frame = frame if frame is not None else sys._getframe(1)
    for _ in range(STACK_DEPTH):
        if frame is None:
            return None
        code = frame.f_code
        if (
            code.co_argcount
            and code.co_varnames[0] == "self"
            and str(Path(code.co_filename).resolve()).startswith(dirs)
        ):
            owner = frame.f_locals.get("self")
            found = _lightning(owner) or _transformers(owner)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def _module(obj: Any) -> str:
    return getattr(type(obj), "__module__", "") or ""


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return math.ceil(value) if math.isfinite(value) else None


def _lightning(owner: Any) -> RunLength | None:
    if not _module(owner).startswith(("lightning", "pytorch_lightning")):
        return None
    trainer = owner
    if not (hasattr(type(owner), "max_steps") and hasattr(type(owner), "max_epochs")):
        try:  # a LightningModule not attached to a trainer raises here
            trainer = getattr(owner, "trainer", None)
        except Exception:  # noqa: BLE001 - no trainer: no length
            return None
    try:
        steps, epochs = _positive(trainer.max_steps), _positive(trainer.max_epochs)
        accumulate = _positive(getattr(trainer, "accumulate_grad_batches", 1)) or 1
    except Exception:  # noqa: BLE001 - not a trainer after all
        return None
    return _length(steps, epochs, accumulate, "Lightning's max_steps", "Lightning's max_epochs")


def _transformers(owner: Any) -> RunLength | None:
    if not _module(owner).startswith("transformers"):
        return None
    args: Any = getattr(owner, "args", None)  # TrainingArguments, read without importing them
    try:
        steps = _positive(args.max_steps)
        epochs = _positive(args.num_train_epochs)
        accumulate = _positive(getattr(args, "gradient_accumulation_steps", 1)) or 1
    except Exception:  # noqa: BLE001 - not a TrainingArguments
        return None
    return _length(
        steps, epochs, accumulate, "transformers' max_steps", "transformers' num_train_epochs"
    )


def _length(
    steps: int | None, epochs: int | None, accumulate: int, steps_source: str, epochs_source: str
) -> RunLength | None:
    """Optimizer steps first (each takes `accumulate` batches), else epochs."""
    if steps is not None:
        return RunLength(steps * accumulate, None, steps_source)
    if epochs is not None:
        return RunLength(None, epochs, epochs_source)
    return None
