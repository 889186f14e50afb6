"""How many batches the workers have finished that the training loop has not taken yet.

A window's consumed samples are biased by the change of this backlog across it: a window that
starts on ready batches and ends on an empty buffer counts work done before it began. With more
workers than CPUs the backlog swings by tens of batches within seconds, because torch hands batches
out in order: a worker starved of CPU holds up the head of the queue while the others finish
theirs, so a short window's consumed rate can sit far on either side of the steady rate. Reading
the backlog at both ends turns consumed samples into produced ones.

The count comes from torch's private `_MultiProcessingDataLoaderIter` state: batches received out
of order and stored (`_task_info` entries holding data), plus those still queued (`_data_queue`,
and with pinning the workers' result queue feeding the pin thread). Where that state is missing (a
custom iterator, another torch) the backlog is unknown (None) and no correction is made.
"""

from __future__ import annotations

from typing import Any

from torch.utils.data.dataloader import _SingleProcessDataLoaderIter


def ready_batches(iterator: Any) -> int | None:
    if iterator is None:
        return None
    if isinstance(iterator, _SingleProcessDataLoaderIter):
        return 0  # the main process loads each batch when asked: nothing is ever ahead
    try:
        stored = sum(1 for info in iterator._task_info.values() if len(info) == 2)
        queued = iterator._data_queue.qsize()
        results = iterator._worker_result_queue
        if results is not iterator._data_queue:  # pinning: a thread moves results between them
            queued += results.qsize()
    except (AttributeError, NotImplementedError, TypeError):  # qsize() is missing on macOS
        return None
    return stored + queued
