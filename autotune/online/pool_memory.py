"""The worker range's memory check online (decision/worker_range.py's `Fits`), and the RAM a
configuration holds, for the cost order (decision/cost.py).

A process's PSS costs the kernel a walk of its page tables, milliseconds per torch worker: read
for a whole pool inside a step, it would slow that step visibly. So the check reads one worker,
the largest, and the cost order's reading of the whole pool runs on a thread of its own, off the
loop. The walk still takes a core and the process's memory map for its duration: read inside a
window, it made that window read low (results/bench/repeated-runs/notes.md). So the climb starts
it with the configuration's pool and waits for it before its windows begin (policy.py,
HillClimb.observe)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import psutil

from autotune.search.guard import MemoryGuard, default_ram_budget_mib, fitting_top
from autotune.space.config import LoaderConfig
from autotune.telemetry.host import MIB, rss_pss
from autotune.transfer.move import iter_tensors


def pss_mib(proc: psutil.Process) -> float:
    try:
        return rss_pss(proc)[1] / MIB
    except psutil.Error:  # a worker that exited meanwhile
        return 0.0


def pool_pss_mib() -> float | None:
    """This process and its workers' PSS now: the configuration's RAM for the cost order. None
    where it cannot be read."""
    try:
        me = psutil.Process()
        return pss_mib(me) + sum(map(pss_mib, me.children(recursive=True)))
    except psutil.Error:
        return None


class RamReading:
    """The cost order's RAM of a configuration, read on a thread (climb_types.RamReader): started
    where the configuration's pool has just started, its value kept for that configuration. A
    reading of a configuration that has since been switched away from is dropped."""

    def __init__(self, read: Callable[[], float | None] = pool_pss_mib):
        self._read = read
        self._lock = threading.Lock()
        self._of: LoaderConfig | None = None  # the configuration the reading in hand is of
        self._thread: threading.Thread | None = None
        self._value: float | None = None

    @property
    def busy(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def wait(self, timeout_s: float) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)

    def start(self, config: LoaderConfig) -> bool:
        """A reading of `config` on a thread; False where one still runs (for another)."""
        with self._lock:
            if self.busy:
                return False
            self._of, self._value = config, None
            self._thread = threading.Thread(target=self._take, name="autotune-ram", daemon=True)
            self._thread.start()
            return True

    def value(self, config: LoaderConfig) -> float | None:
        """The reading of `config`, once done; None before, or where it could not be read."""
        with self._lock:
            return None if self.busy or self._of != config else self._value

    def _take(self) -> None:
        try:
            value = self._read()
        except Exception:  # never the loop's concern: the cost order goes without it
            value = None
        self._value = value


class PoolMemory:
    """The worker range's `Fits` online, reading this process's memory now: the running pool's
    largest worker teaches the guard what one more costs (its children are the loader's workers),
    the process alone is the rest, and the first batch delivered what each batch in flight needs
    of /dev/shm. Read before each candidate starts and when the range would grow: two PSS
    readings, a few times a run. The RAM budget and the free /dev/shm are this rank's share of
    the node's (`ranks`)."""

    def __init__(self, guard: MemoryGuard | None = None, ranks: int = 1):
        ranks = max(1, ranks)
        self.guard = guard or MemoryGuard(
            default_ram_budget_mib() / ranks, batch_mib=0.0, shm_sharers=ranks
        )
        self.batch_sized = False

    def learn_batch(self, batch: Any) -> None:
        """The first batch delivered: its tensors' bytes, as the offline probe batch's."""
        self.batch_sized = True
        self.guard.batch_mib = sum(t.nbytes for t in iter_tensors(batch)) / MIB

    def __call__(self, top: int, wanted: int) -> tuple[int | None, str]:
        return fitting_top(
            LoaderConfig(num_workers=top), top, wanted, self.guard, main_mib=self._read()
        )

    def room(self, config: LoaderConfig) -> str | None:
        """Why `config`'s pool would not fit in RAM or /dev/shm now, else None: every candidate
        is checked before it starts, not only a range that grows."""
        return self.guard.skip_reason(config, main_mib=self._read())

    def _read(self) -> float:
        """The process alone, now; the running pool's largest worker (by RSS, which costs
        nothing to read) teaches what one costs."""
        me = psutil.Process()
        largest = max(me.children(recursive=True), key=_rss, default=None)
        if largest is not None:
            self.guard.worker_mib = max(self.guard.worker_mib, pss_mib(largest))
        return pss_mib(me)


def _rss(proc: psutil.Process) -> int:
    try:
        return proc.memory_info().rss
    except psutil.Error:
        return 0
