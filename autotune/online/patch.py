"""torch's DataLoader replaced by `autotune.DataLoader` in a process that did not ask for it: what
`autotune run` does to an unmodified script, as the NVTX talk's habit patches the DataLoader at
run time.

Both names are replaced, `torch.utils.data.DataLoader` and `torch.utils.data.dataloader.DataLoader`,
so `from torch.utils.data import DataLoader` made after the patch, `isinstance` checks and
frameworks that re-create a loader from its class (`type(loader)(**arguments)`, as Lightning does)
all get the tuned class. autotune.DataLoader builds its inner loaders from torch's own class, kept
aside, so the patch never recurses.
"""

from __future__ import annotations

import sys

PATCHED_MODULES = ("torch.utils.data", "torch.utils.data.dataloader")


def install() -> None:
    """Point both names at autotune.DataLoader now (torch is imported if it was not)."""
    import torch.utils.data  # noqa: F401  (the modules patched below)
    import torch.utils.data.dataloader  # noqa: F401

    from autotune.online.loader import DataLoader

    for name in PATCHED_MODULES:
        sys.modules[name].__dict__["DataLoader"] = DataLoader


def uninstall() -> None:
    """Back to torch's own class."""
    from autotune.online.loader import TORCH_DATALOADER

    for name in PATCHED_MODULES:
        if name in sys.modules:
            sys.modules[name].__dict__["DataLoader"] = TORCH_DATALOADER


def installed() -> bool:
    module = sys.modules.get("torch.utils.data")
    return (
        module is not None
        and getattr(module.DataLoader, "__module__", "") == "autotune.online.loader"
    )
