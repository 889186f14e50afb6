"""One process's per-stage totals during a profiling run (stages.py), written to
`<dir>/stages-<pid>.json` every FLUSH_S and at the process's exit, and read back merged by the
main process once the workers are gone."""

from __future__ import annotations

import json
import os
import time
from multiprocessing import util as mp_util
from pathlib import Path

FLUSH_S = 0.5  # a worker writes its totals at least this often (and when it exits)
WARMUP_BATCHES = 1  # per process: first calls import, allocate and fill caches
FILE_GLOB = "stages-*.json"


# -- in every process: accumulate and write ---------------------------------------------------
class Recorder:
    """One process's totals per stage: [count, wall seconds, CPU seconds]."""

    def __init__(self, directory: str):
        self.pid = os.getpid()
        self.path = Path(directory) / f"stages-{self.pid}.json"
        self.totals: dict[str, list[float]] = {}
        self.batches = 0
        self.last_flush = time.perf_counter()
        # Runs at the exit of a multiprocessing child (and of the main process, via atexit).
        self.finalizer = mp_util.Finalize(self, self.flush, exitpriority=10)

    def add(self, name: str, wall_s: float, cpu_s: float, count: int = 1) -> None:
        if self.batches < WARMUP_BATCHES:
            return
        entry = self.totals.get(name)
        if entry is None:
            self.totals[name] = [count, wall_s, cpu_s]
        else:
            entry[0] += count
            entry[1] += wall_s
            entry[2] += cpu_s

    def end_batch(self) -> None:
        self.batches += 1
        now = time.perf_counter()
        if now - self.last_flush >= FLUSH_S:
            self.last_flush = now
            self.flush()

    def flush(self) -> None:
        if not self.totals:
            return
        tmp = self.path.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(self.totals))
            tmp.replace(self.path)  # atomic: the reader never sees half a file
        except OSError:  # the run's folder is gone: the profiling run was abandoned
            pass


_recorders: dict[str, Recorder] = {}


def recorder(directory: str) -> Recorder:
    """This process's recorder for `directory`; a forked child starts its own, not its parent's."""
    found = _recorders.get(directory)
    if found is None or found.pid != os.getpid():
        found = _recorders[directory] = Recorder(directory)
    return found


def release(directory: str) -> None:
    """Write this process's totals for `directory` now (the main process, where num_workers=0 did
    the work) and drop its recorder: nothing of the profiling run stays behind."""
    rec = _recorders.pop(directory, None)
    if rec is not None and rec.pid == os.getpid():
        rec.finalizer()  # flushes once and unregisters


def read_totals(directory: Path) -> tuple[dict[str, list[float]], int]:
    """Totals per stage summed over every process that wrote, and how many processes did."""
    merged: dict[str, list[float]] = {}
    files = sorted(directory.glob(FILE_GLOB))
    for path in files:
        try:
            totals = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for name, values in totals.items():
            entry = merged.setdefault(name, [0, 0.0, 0.0])
            for i, value in enumerate(values):
                entry[i] += value
    return merged, len(files)
