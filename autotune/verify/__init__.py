"""Independent checks of what a tuning recorded.

    result = autotune.verify("results/runs/DATE-WORKLOAD")          # or a recipe file
    result = autotune.verify("recipe.json", "sim:cpu_ms=4", seconds=20, rounds=3)
    result = autotune.verify(autotune.tune(workload))                # a TuneResult
    result.recorded_samples_per_s, result.verified_samples_per_s, result.difference_pct

`autotune.verify(...)` is `autotune.verify.run.verify` (this package is callable, so that the
function and its modules share one name): the recipe's configuration and PyTorch's defaults are
measured alternately in a plain training loop (steady.py, independent of autotune's burst runner),
and the findings written beside the recipe (verify.json, verify.md).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from autotune.verify.model import Verification
from autotune.verify.run import verify

__all__ = ["Verification", "verify"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Verification:
        return verify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
