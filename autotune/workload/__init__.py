"""What is tuned: a dataset, a batch size and one training step."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.workload.base import Workload
    from autotune.workload.options import WorkloadOptions
    from autotune.workload.spec import load_workload

__getattr__ = exports(
    __name__,
    {
        "Workload": "autotune.workload.base",
        "WorkloadOptions": "autotune.workload.options",
        "load_workload": "autotune.workload.spec",
    },
)
__all__ = ["Workload", "WorkloadOptions", "load_workload"]
