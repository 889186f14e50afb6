"""What is tuned: a dataset, a batch size and one training step."""

from autotune.workload.base import Workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

__all__ = ["Workload", "WorkloadOptions", "load_workload"]
