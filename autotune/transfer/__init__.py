"""How batches reach the device: the transfer knobs applied to each batch."""

from typing import TYPE_CHECKING

from autotune.lazy import exports

if TYPE_CHECKING:
    from autotune.transfer.device_loader import DeviceLoader
    from autotune.transfer.move import iter_tensors, move_to_device

__getattr__ = exports(
    __name__,
    {
        "DeviceLoader": "autotune.transfer.device_loader",
        "iter_tensors": "autotune.transfer.move",
        "move_to_device": "autotune.transfer.move",
    },
)
__all__ = ["DeviceLoader", "iter_tensors", "move_to_device"]
