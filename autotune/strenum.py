"""`enum.StrEnum` (Python 3.11+), with a stand-in on 3.10: enum members that are their string
values, so statuses and knob targets go into JSON, studies and f-strings as plain text."""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised on Python 3.10 only

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str(self.value)


__all__ = ["StrEnum"]
