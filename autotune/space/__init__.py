"""What to try: the seven knobs, their validity rules and the search space over them."""

from autotune.space.config import KNOBS, LoaderConfig
from autotune.space.cpus import CpuBudget, usable_cpus
from autotune.space.space import SearchSpace

__all__ = ["KNOBS", "LoaderConfig", "CpuBudget", "usable_cpus", "SearchSpace"]
