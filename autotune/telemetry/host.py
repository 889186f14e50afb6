"""Host CPU use and resident memory of the main process plus its DataLoader workers (psutil)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import psutil

from autotune.telemetry.sampler import PeriodicSampler

MIB = 1024 * 1024

# Started by Python's multiprocessing the first time a process spawns (torch.multiprocessing,
# a rank group), they live until it exits: not the pipeline's workers, so neither counted nor
# summed into its CPU and memory.
MP_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def is_mp_helper(proc: psutil.Process) -> bool:
    try:
        return any(helper in " ".join(proc.cmdline()) for helper in MP_HELPERS)
    except psutil.Error:
        return False


@dataclass(frozen=True)
class HostStats:
    cpu_pct: float  # CPU time of the process tree over wall time, as % of the usable CPUs
    cpu_cores_used: float
    peak_rss_mib: float  # summed RSS of main + workers: shared pages count once per process
    peak_pss_mib: float  # summed PSS: shared pages split between processes, the real footprint
    peak_workers: int
    # Busy share of the usable CPUs from every process on the machine: when it is high and
    # cpu_pct is not, other processes hold the cores this run could use. None where unreadable.
    system_cpu_pct: float | None = None


class HostSampler(PeriodicSampler):
    # CPU times and RSS are cheap to read; PSS walks every mapping of every process (milliseconds
    # each), so it is read on the first sample, every PSS_EVERY-th one (4 s) and the last: PSS
    # grows as workers touch pages, so the last sample holds the peak. Sampling then stays inside
    # the 2% budget of autotune's own measuring (`autotune overhead` measures it).
    interval_s = 0.25
    PSS_EVERY = 16

    def __init__(self, usable_cpus: int, process: psutil.Process | None = None):
        super().__init__()
        self.usable_cpus = max(1, usable_cpus)
        self.process = process or psutil.Process()
        self._first_cpu: dict[int, float] = {}
        self._last_cpu: dict[int, float] = {}
        self.peak_rss = 0
        self.peak_pss = 0
        self.peak_workers = 0
        self._t0 = self._t1 = 0.0
        self._system_start: tuple[float, float] | None = None
        self._count = 0
        self._helper: dict[int, bool] = {}  # pid -> is_mp_helper, read once: cmdline is a syscall

    def _counted(self, proc: psutil.Process) -> bool:
        if proc.pid not in self._helper:
            self._helper[proc.pid] = is_mp_helper(proc)
        return not self._helper[proc.pid]

    def sample(self) -> None:
        full = self._count % self.PSS_EVERY == 0 or self._stop.is_set()  # set: the final sample
        self._count += 1
        try:
            procs = [self.process] + [
                p for p in self.process.children(recursive=True) if self._counted(p)
            ]
        except psutil.Error:
            return
        rss = pss = 0
        alive = 0
        for proc in procs:
            try:
                with proc.oneshot():
                    if proc.status() == psutil.STATUS_ZOMBIE:
                        continue  # exited, not yet reaped: no longer a worker
                    times = proc.cpu_times()
                    rss_i, pss_i = rss_pss(proc) if full else (proc.memory_info().rss, 0)
            except psutil.Error:
                continue  # a worker that exited between listing and reading
            rss += rss_i
            pss += pss_i
            alive += 1
            cpu = times.user + times.system
            # Workers started mid-window count from zero; those alive at start count the delta.
            self._first_cpu.setdefault(
                proc.pid, cpu if not self._t0 or proc is self.process else 0.0
            )
            self._last_cpu[proc.pid] = cpu
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_workers = max(self.peak_workers, alive - 1)

    def start(self) -> None:
        self._t0 = 0.0
        self._system_start = _system_busy()
        super().start()
        self._t0 = time.perf_counter()

    def stop(self) -> HostStats:
        self.halt()
        wall = max(1e-9, time.perf_counter() - self._t0)
        used = sum(self._last_cpu[pid] - self._first_cpu.get(pid, 0.0) for pid in self._last_cpu)
        cores = used / wall
        end = _system_busy()
        system = None
        if self._system_start is not None and end is not None and end[1] > self._system_start[1]:
            system = 100.0 * (end[0] - self._system_start[0]) / (end[1] - self._system_start[1])
        return HostStats(
            cpu_pct=100.0 * cores / self.usable_cpus,
            cpu_cores_used=cores,
            peak_rss_mib=self.peak_rss / MIB,
            peak_pss_mib=self.peak_pss / MIB,
            peak_workers=self.peak_workers,
            system_cpu_pct=system,
        )


def _system_busy() -> tuple[float, float] | None:
    """(busy, total) CPU seconds so far, summed over the CPUs this process may run on."""
    try:
        per_cpu = psutil.cpu_times(percpu=True)
    except (psutil.Error, OSError):
        return None
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(len(per_cpu))
    busy = total = 0.0
    for index in allowed:
        if index < len(per_cpu):
            times = per_cpu[index]
            idle = times.idle + getattr(times, "iowait", 0.0)
            # guest time is already inside user time on Linux
            cpu_total = (
                sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
            )
            busy += cpu_total - idle
            total += cpu_total
    return (busy, total) if total > 0 else None


def rss_pss(proc: psutil.Process) -> tuple[int, int]:
    """RSS and PSS in bytes. Forked workers share the parent's pages (torch's libraries alone are
    hundreds of MiB), so summed RSS overstates a pool many times; PSS does not. Where PSS is not
    readable (non-Linux), RSS stands in for it."""
    try:
        info = proc.memory_full_info()
        return info.rss, getattr(info, "pss", info.rss)
    except psutil.AccessDenied:
        rss = proc.memory_info().rss
        return rss, rss


def tree_memory_mib(process: psutil.Process | None = None) -> tuple[float, float]:
    """Current summed (RSS, PSS) of a process and its children, in MiB."""
    process = process or psutil.Process()
    rss = pss = 0
    for proc in [process] + process.children(recursive=True):
        try:
            r, p = rss_pss(proc)
        except psutil.Error:
            continue
        rss += r
        pss += p
    return rss / MIB, pss / MIB
