"""How batches reach the device: the transfer knobs applied to each batch."""

from autotune.transfer.device_loader import DeviceLoader
from autotune.transfer.move import iter_tensors, move_to_device

__all__ = ["DeviceLoader", "iter_tensors", "move_to_device"]
