"""Room in /dev/shm: DataLoader workers hand every batch to the main process through it.

Docker gives containers 64 MiB by default; a worker pool whose batches in flight do not fit dies
with a bus error or "No space left on device".
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
SHM_PATH = Path("/dev/shm")

# Below this `autotune env` warns: 8 workers x prefetch 2 of 64 x 3x224x224 float32 batches
# (37 MiB each) already hold ~600 MiB in flight, and larger pools or images need more.
SMALL_SHM_MIB = 1024


@dataclass(frozen=True)
class ShmSpace:
    total_mib: float
    free_mib: float

    @property
    def small(self) -> bool:
        return self.total_mib < SMALL_SHM_MIB


def shm_space(path: Path = SHM_PATH) -> ShmSpace | None:
    """Size and free space of /dev/shm; None where there is none (macOS, Windows)."""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return None
    return ShmSpace(total_mib=usage.total / MIB, free_mib=usage.free / MIB)
