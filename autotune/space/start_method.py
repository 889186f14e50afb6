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


def import_what_workers_import(num_workers: int) -> None:
    """Where a loader has workers (`num_workers` > 0), import in this process what torch's worker
    loop would import first in each forked worker:
    numpy.random, which it seeds and numpy 2 loads lazily. On Python 3.11 and older, a garbage
    collection inside an import whose finalizer imports too raises KeyError in the import lock
    (CPython gh-91351): a forked worker, collecting the garbage it inherited while importing,
    died of it at a pool's start. A module already imported costs a worker no import."""
    if num_workers <= 0:
        return
    try:
        import numpy.random  # noqa: F401
    except ImportError:
        pass  # no numpy: torch's worker loop does not seed it
