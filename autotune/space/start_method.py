"""Which start method a DataLoader's worker processes use."""

from __future__ import annotations

import multiprocessing
from typing import Any


def start_method(context: Any = None) -> str:
    """`context`: a DataLoader's multiprocessing_context (a name, a context, or None). None means
    the process-wide method: the one set with set_start_method, else the platform's default (the
    first of get_all_start_methods). Read without fixing the default, as get_start_method()
    would."""
    if isinstance(context, str):
        return context
    if context is not None:
        return context.get_start_method()
    return (
        multiprocessing.get_start_method(allow_none=True)
        or multiprocessing.get_all_start_methods()[0]
    )
