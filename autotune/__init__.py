"""autotune: find the DataLoader settings that keep your accelerator fed, by measuring them."""

from autotune.api import tune
from autotune.errors import AutotuneError, RecipeError, WorkloadError
from autotune.online.loader import DataLoader
from autotune.recipe.model import Recipe, load_recipe
from autotune.search.interrupt import TuningInterrupted
from autotune.search.result import TuneResult
from autotune.transfer.device_loader import DeviceLoader
from autotune import verify  # callable: autotune.verify(run_dir_or_recipe, ...)
from autotune.workload.base import Workload

__version__ = "0.1.0"
__all__ = ["AutotuneError", "DataLoader", "DeviceLoader", "Recipe", "RecipeError", "TuneResult",
           "TuningInterrupted", "Workload", "WorkloadError", "load_recipe", "tune", "verify"]
