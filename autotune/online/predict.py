"""How many workers the step needs, from what the training loop showed: the offline probes' model
(probe/ceilings.py), fed the loop's own measurements instead of probes.

One worker's fetch is seen one of two ways:
- at num_workers=0 the main process fetches each batch inside `__next__`: that wait is what one
  worker would take per batch, and the main thread's CPU share of it tells computing (a worker
  keeps a core busy: the free cores cap the count) from waiting on storage (no cap: waiting
  workers overlap);
- where the run starts with workers (a script that sets num_workers), a starved pool's workers
  are busy all the time, so each takes num_workers / rate per batch, and their CPU
  (pool_cpu.py) tells the same two apart. Where their CPU fills the cores the step leaves them,
  their wall time is stretched by sharing the cores: one worker alone takes its CPU time.
The rest of the step is the step's own work, and its process CPU the cores it keeps busy. Rates
are in batches/s on both sides, so the probes' samples/s fields hold batches/s.
"""

from __future__ import annotations

from autotune.online.measurement import Measurement
from autotune.probe.ceilings import Ceilings
from autotune.probe.device import DeviceProbe
from autotune.probe.loader import LoaderProbe

# A fetch whose CPU time is above this many times its wall time ran on torch's intra-op threads.
THREADED_FETCH = 1.5
# A pool whose workers keep this share of the cores the step leaves them busy is CPU-bound: its
# workers' wall time is spent sharing cores, not waiting on storage.
SATURATED = 0.8


def threaded_fetch(m: Measurement) -> bool:
    return m.steady_wait_s > 0 and m.steady_wait_cpu_s > THREADED_FETCH * m.steady_wait_s


def _device(m: Measurement) -> DeviceProbe | None:
    """The step alone, as `m`'s steady steps ran it (their time outside `__next__`). After a
    fetch on torch's intra-op threads, those threads spin on into the step (OpenMP's wait policy),
    so the process's CPU there is not the step's: it is taken as one core, the thread that runs
    the loop. Counted as the step's, the spinning would leave the prediction almost no free core
    on a many-core machine, and too few workers (results/gpu/)."""
    work_s = m.steady_s - m.steady_wait_s
    if m.steady_steps == 0 or work_s <= 0:
        return None
    host_cores = max(0.0, m.steady_work_cpu_s) / work_s
    if threaded_fetch(m):
        host_cores = min(host_cores, 1.0)
    return DeviceProbe(
        samples_per_s=m.steady_steps / work_s,
        channels_last=False,
        steps=m.steady_steps,
        window_s=work_s,
        host_cores=host_cores,
    )


def _one_worker(at_zero: Measurement) -> LoaderProbe | None:
    """One worker, as the main process's own fetch at num_workers=0 showed it. A worker runs its
    fetch on one thread (torch sets one intra-op thread in workers): where the main process's
    fetch ran on torch's threads, one worker takes its CPU time, an upper bound (their spinning is
    in it), since a fetch spread over many threads in the main process runs far slower on the
    one thread of a worker."""
    wall_s = at_zero.steady_wait_s
    if at_zero.config.num_workers != 0 or at_zero.steady_steps == 0 or wall_s <= 0:
        return None
    fetch_s = at_zero.steady_wait_cpu_s if threaded_fetch(at_zero) else wall_s
    return LoaderProbe(
        workers=1,
        samples_per_s=at_zero.steady_steps / fetch_s,
        window_s=fetch_s,
        samples=at_zero.steady_steps,
        tree_cores=min(1.0, max(0.0, at_zero.steady_wait_cpu_s) / fetch_s),
        main_cores=0.0,
    )


def _pool_worker(pool: Measurement, free_cores: float) -> LoaderProbe | None:
    """One worker, as a starved pool's own workers showed it (the module's second way)."""
    w, cores, rate = pool.config.num_workers, pool.workers_cores, pool.steady_rate
    if w < 1 or cores is None or not pool.short or rate is None:
        return None
    cpu_s = cores / rate  # the workers' CPU per batch
    fetch_s = cpu_s if cores >= SATURATED * free_cores else w / rate
    if fetch_s <= 0:
        return None
    return LoaderProbe(
        workers=1,
        samples_per_s=1 / fetch_s,
        window_s=pool.workers_wall_s,
        samples=pool.steady_steps,
        tree_cores=min(1.0, cpu_s / fetch_s),
        main_cores=0.0,
    )


def _starved(m: Measurement) -> LoaderProbe | None:
    """A starved configuration's rate is its loader's: the scaling seen at its worker count."""
    w, rate = m.config.num_workers, m.steady_rate
    if w < 2 or not m.short or rate is None:
        return None
    return LoaderProbe(
        workers=w,
        samples_per_s=rate,
        window_s=m.steady_s,
        samples=m.steady_steps,
        tree_cores=0.0,
        main_cores=0.0,
    )


def needed_workers(
    fetched: Measurement | None, current: Measurement, usable_cpus: int, max_workers: int
) -> int | None:
    """Fewest workers expected to keep `current`'s step fed, capped where CPU-bound loading runs
    out of cores; None without a measured fetch (`fetched`: at num_workers=0, or a starved pool
    whose workers' CPU was read)."""
    device = _device(current)
    if fetched is None or device is None:
        return None
    ceilings = Ceilings((device,), usable_cpus)
    if fetched.config.num_workers == 0:
        one = _one_worker(fetched)
    else:
        one = _pool_worker(fetched, ceilings.cores_for_workers)
    if one is None:
        return None
    ceilings.loader[1] = one
    scaled = _starved(current)
    if scaled is not None:
        ceilings.add(scaled)
    return ceilings.predicted_workers(max_workers)
