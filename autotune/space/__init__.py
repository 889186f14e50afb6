"""What to try: the knob registry, the configurations it makes, their validity rules and the
search space over them."""

from autotune.space.config import LoaderConfig
from autotune.space.cpus import CpuBudget, usable_cpus
from autotune.space.knobs import KNOBS, Knob
from autotune.space.space import SearchSpace

__all__ = ["KNOBS", "Knob", "LoaderConfig", "CpuBudget", "usable_cpus", "SearchSpace"]
