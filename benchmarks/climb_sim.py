"""The online climb (autotune/online/policy.py, as autotune.DataLoader runs it) driven by the
in-order model of torch's DataLoader (inorder_model.py) instead of a loader: every step it would
see (step and wait times, the backlog, a switch's start-up), computed on a simulated clock. A
training of `steps` steps is run three ways, as `bench --online` runs them: (b) the climb from the
script's num_workers=0, (c) the model's best fixed configuration from step 0; their times give
(b)/(c) over the whole run and after exploring. Deterministic: a change to the climb is compared
on many shuffles in seconds, with no machine's noise, before a real bench.

What the model leaves out, so the figures are the climb's on an ideal machine: CPU contention (the
workers' CPU is capped as a whole, inorder_model.cpu_ceiling, not per step), the main process's
own per-batch work beyond `handover_ms`, the RAM reading, and the OS's jitter beyond `jitter`.
Each process pays the dataset's open_ms before its first item (the main process once, at
num_workers=0). A switch retires the running pool (its batches in flight are made again by the
next one, as the index stream replays them) and starts a new one: `fork_ms` per worker, one
after another, then each worker's first batch; a switch of the prefetch depth, or to persistent
workers, alone keeps the pool, as the loader does (online/epoch.py, LoaderConfig.same_pool). An
epoch's end refills a persistent pool and restarts any other, whose workers have exited by the
time the loop sees the end (their CPU is read None from then on, as psutil reads torch's).

Run from the repository root: python benchmarks/climb_sim.py WORKLOAD [--seeds 10] [--steps 3000]
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from autotune.burst.window import PullWaits  # noqa: E402
from autotune.online.climb_types import ClimbSettings  # noqa: E402
from autotune.online.meter import Step  # noqa: E402
from autotune.online.options import TUNED  # noqa: E402
from autotune.online.policy import FixedPolicy, HillClimb, Policy  # noqa: E402
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig  # noqa: E402
from autotune.workload.simulated import SimSpec  # noqa: E402
from benchmarks.accuracy import parse_config  # noqa: E402
from benchmarks.inorder_model import DEPTHS, batch_seconds, cpu_ceiling  # noqa: E402
from benchmarks.provenance import git_commit  # noqa: E402
from benchmarks.workloads import BENCH_WORKLOADS  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "bench" / "climb-sim"


@dataclass
class Pool:
    """The running inner loader: its configuration, when each worker is free, when each batch
    sent is ready, the next batch to send, and the batch its workers' round-robin began at
    (torch starts it at worker 0 for a new iterator and at each epoch's reset)."""

    config: LoaderConfig
    free: list[float]
    ready: dict[int, float] = field(default_factory=dict)
    next_send: int = 0
    base: int = 0
    made: list[float] = field(default_factory=list)  # when each batch it sent was ready
    # Its workers have exited: torch shuts a non-persistent pool down as its epoch ends, before
    # the loop sees the end (the StopIteration), so their CPU can no longer be read.
    exited: bool = False


@dataclass
class Machine:
    """The loop and its loader on a simulated clock."""

    spec: SimSpec
    cpus: float = 2.0
    fork_ms: float = 20.0  # a worker's start, one after another (fork of a process holding torch)
    # The main process's own time per batch inside __next__ (receiving a ready batch from a
    # worker), and whatever else the model leaves out: fitted per workload so that the simulated
    # (c) takes the online bench's measured time (`--calibrate`, results/bench/climb-sim/
    # calibration.out); this is the median of the 16-item 3x32x32 workloads' fits.
    handover_ms: float = 1.5
    jitter: float = 0.0  # each step's relative noise (gauss)
    seed: int = 0

    def __post_init__(self) -> None:
        self.epoch = self.spec.length // self.spec.batch
        self.step_s = (self.spec.step_ms + self.spec.host_ms) / 1000
        self._rng = random.Random(self.seed)
        self._epochs: dict[int, list[float]] = {}
        self._main_opened = False  # the main process paid its open_ms (at num_workers=0)
        # The cores' cap on the workers as a whole (inorder_model.cpu_ceiling): no worker makes a
        # batch faster than num_workers / ceiling.
        ceiling = cpu_ceiling(self.spec, self.cpus)
        self._least_gap = 0.0 if ceiling == float("inf") else 1 / ceiling
        self.now = 0.0  # the clock where the policy is called
        self.pool: Pool | None = None  # the running pool, where the policy is called

    def times(self, epoch: int) -> list[float]:
        if epoch not in self._epochs:
            self._epochs[epoch] = batch_seconds(self.spec, self.epoch, self.seed * 1000 + epoch)
        return self._epochs[epoch]

    def run(self, policy: Policy, steps: int) -> Run:
        """The loop's `steps` steps under `policy`."""
        now = 0.0
        pool: Pool | None = None
        switch_to: LoaderConfig | None = None
        handed: list[float] = []
        ended: int | None = None if policy.exploring else 0
        segment = 0
        pulls = PullWaits()  # as the Meter keeps it
        for n in range(steps):
            epoch, k = divmod(n, self.epoch)
            times = self.times(epoch)
            entered = now
            config = switch_to or policy.current
            timed = True  # a pool starts or refills here: the step times its start-up
            if k == 0:
                pulls.new_epoch()  # Meter.epoch_ended
            if (
                k == 0
                and pool is not None
                and pool.config.persistent_workers
                and (pool.config == config or pool.config.same_pool(config))
            ):
                pool.config = config  # a kept pool's next epoch, at the depth asked for
                self._refill(pool, now, k, times)
                segment = 0
            elif (
                k > 0
                and pool is not None
                and switch_to is not None
                and pool.config.same_pool(config)
            ):
                # The loader's redepth or keep_past_epoch: the workers and their batches kept.
                pool.config = config
                while pool.next_send < min(self.epoch, k + config.prefetch_depth):
                    self._send(pool, pool.next_send, now, times)
                segment, timed = 0, False
            elif pool is None or switch_to is not None or k == 0:
                pool = self._start(config, now, k, times)
                segment = 0
                pulls.new_pool()
            switch_to = None
            if pool.config.num_workers == 0:
                out = now + times[k] + (0.0 if self._main_opened else self.spec.open_ms / 1000)
                self._main_opened = True
                wait_cpu = self.spec.batch * self.spec.cpu_ms / 1000
                backlog = None
            else:
                out = max(now, pool.ready[k]) + self.handover_ms / 1000
                wait_cpu = 0.0001
                # The batch taken frees a slot: torch sends the next one (none past the depth).
                if pool.next_send < min(self.epoch, k + 1 + pool.config.prefetch_depth):
                    self._send(pool, pool.next_send, out, times)
                backlog = sum(1 for j in range(k + 1, pool.next_send) if pool.ready[j] <= out)
            step = Step(
                n,
                None if k == 0 or not handed else out - handed[-1],
                out - entered,
                segment,
                out - entered if segment == 0 and timed else None,
                wait_cpu_s=wait_cpu,
                work_cpu_s=0.0,
                backlog=backlog,
                epoch_step=k,
                unready_s=pulls.unready(out - entered, backlog),
            )
            handed.append(out)
            self.now, self.pool = out, pool
            nxt = policy.observe(step)
            segment += 1
            if k == self.epoch - 1:
                pool.exited = not pool.config.persistent_workers and pool.config.num_workers > 0
                nxt = policy.epoch_ended() or nxt
            switch_to = nxt
            if policy.exploring:
                ended = None  # where a run outlives its horizon, exploring resumes
            elif ended is None:
                ended = n + 1
            noise = 1 + self._rng.gauss(0, self.jitter) if self.jitter else 1.0
            now = out + self.step_s * max(noise, 0.1)
        return Run(handed, ended, policy.current)

    def _start(self, config: LoaderConfig, now: float, k: int, times: list[float]) -> Pool:
        """A new pool at batch k of its epoch: its workers forked one after another, each paying
        the dataset's open_ms before its first item, then sent the first num_workers x
        prefetch_factor batches."""
        opened = self.spec.open_ms / 1000
        forked = [now + self.fork_ms / 1000 * (i + 1) + opened for i in range(config.num_workers)]
        pool = Pool(config, forked, next_send=k, base=k)
        if config.num_workers:
            self._refill(pool, now, k, times)
        return pool

    def _refill(self, pool: Pool, now: float, k: int, times: list[float]) -> None:
        """iter() of the pool at batch k: torch's first num_workers x prefetch_factor sends."""
        pool.ready.clear()
        pool.next_send = pool.base = k
        for j in range(k, min(k + pool.config.prefetch_depth, self.epoch)):
            self._send(pool, j, now, times)

    def _send(self, pool: Pool, j: int, at: float, times: list[float]) -> None:
        workers = pool.config.num_workers
        w = (j - pool.base) % workers
        made = max(times[j], self._least_gap * workers)
        pool.free[w] = pool.ready[j] = max(pool.free[w], at) + made
        pool.made.append(pool.ready[j])
        pool.next_send = j + 1


@dataclass
class SimCpu:
    """The running pool's workers' CPU on the simulated clock (climb_types.PoolCpu): each batch
    costs the spec's CPU per batch, counted once it is ready."""

    machine: Machine

    def start(self) -> tuple[float, float] | None:
        return self.read()

    def read(self) -> tuple[float, float] | None:
        m = self.machine
        if m.pool is None or m.pool.config.num_workers == 0 or m.pool.exited:
            return None
        cpu_s = (m.spec.batch * m.spec.cpu_ms + m.spec.collate_ms) / 1000
        return cpu_s * sum(1 for t in m.pool.made if t <= m.now), m.now


@dataclass(frozen=True)
class Run:
    handed: list[float]  # each step's hand-out, seconds from the run's start
    ended: int | None  # the step after which exploring had ended; None: it never did
    config: LoaderConfig  # the configuration at the end

    @property
    def seconds(self) -> float:
        return self.handed[-1]

    def span(self, start: int) -> float:
        """Seconds from step `start`'s hand-out to the last."""
        return self.handed[-1] - self.handed[start]


def climb(
    spec: SimSpec,
    epoch_steps: int,
    cpus: float,
    start: LoaderConfig = PYTORCH_DEFAULTS,
    cpu: SimCpu | None = None,
) -> HillClimb:
    """(b)'s policy, as setup.py builds it for a loader at `start`, the script's configuration
    (torch's defaults unless told), its workers' CPU read from `cpu`: no RAM reading, no memory
    check."""
    settings = ClimbSettings(epoch_steps=epoch_steps, usable_cpus=int(cpus), cuda=False)
    return HillClimb(start, TUNED, settings, cpu=cpu)


@dataclass(frozen=True)
class Round:
    seed: int
    chosen: LoaderConfig
    ended: int | None
    whole: float  # (c) seconds / (b) seconds
    after: float | None  # the same over the steps after (b)'s exploring


def one_round(
    spec: SimSpec,
    ideal: LoaderConfig,
    steps: int,
    seed: int,
    make: Callable[[], Machine],
    start: LoaderConfig = PYTORCH_DEFAULTS,
) -> Round:
    b_machine, c_machine = make(), make()
    policy = climb(spec, b_machine.epoch, b_machine.cpus, start, SimCpu(b_machine))
    b = b_machine.run(policy, steps)
    c = c_machine.run(FixedPolicy(ideal), steps)
    after = None
    if b.ended is not None and b.ended < steps - 1:
        after = c.span(b.ended) / b.span(b.ended)
    return Round(seed, b.config, b.ended, c.seconds / b.seconds, after)


GRID_WORKERS = (0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 20)
Make = Callable[[int], Machine]  # a machine for one shuffle (seed)


def ideal_config(spec: SimSpec, steps: int, make: Make) -> LoaderConfig:
    """The exhaustive grid's best on the simulated machine (shuffle 0): every worker count of
    GRID_WORKERS at every depth, with and without persistent workers, each run for `steps` from
    step 0 as (c) runs; the cheapest within 1% of the fastest (fewest workers, then depth, then
    no persistence)."""
    configs = [PYTORCH_DEFAULTS] + [
        LoaderConfig(num_workers=w, prefetch_factor=d, persistent_workers=p)
        for w in GRID_WORKERS[1:]
        for d in DEPTHS
        for p in (False, True)
    ]
    seconds = {c: make(0).run(FixedPolicy(c), steps).seconds for c in configs}
    fastest = min(seconds.values())
    return min(
        (c for c in configs if seconds[c] <= fastest * 1.01),
        key=lambda c: (c.num_workers, c.prefetch_factor or 0, c.persistent_workers),
    )


def sim_workloads(keys: list[str]) -> list[tuple[str, str, SimSpec]]:
    """The bench workloads named (default: every `sim:` one the online bench runs at its full
    length): key, spec text, parsed spec."""
    chosen = [w for w in BENCH_WORKLOADS if w.key in keys] if keys else list(BENCH_WORKLOADS)
    unknown = set(keys) - {w.key for w in chosen if w.spec.startswith("sim:")}
    if unknown:
        sys.exit(f"climb_sim: not a bench workload of the sim: kind: {', '.join(sorted(unknown))}")
    return [
        (w.key, w.spec, SimSpec.parse(w.spec.removeprefix("sim:")))
        for w in chosen
        if w.spec.startswith("sim:") and (keys or (w.default and w.online_steps is None))
    ]


def calibration(folder: Path, keys: list[str], steps: int, cpus: float) -> list[str]:
    """The main process's per-batch hand-over that puts the simulated (c) at the measured one:
    for each workload of an online bench's `folder` (<key>/online.json), its (c) configuration's
    median seconds against the simulation's at 0.3 and 1.3 ms, interpolated."""
    lines = ["| workload | (c) | measured | simulated at 0.3 ms | at 1.3 ms | hand-over fitted |"]
    lines.append("|---|---|---:|---:|---:|---:|")
    for key, _, spec in sim_workloads(keys):
        path = folder / key / "online.json"
        if not path.is_file():
            continue
        row = json.loads(path.read_text())["rows"][0]
        measured = statistics.median(r["seconds"]["ideal"] for r in row["rounds"])
        config = parse_config(row["ideal"])
        at = {
            h: Machine(spec, cpus=cpus, handover_ms=h).run(FixedPolicy(config), steps).seconds
            for h in (0.3, 1.3)
        }
        fitted = 0.3 + (measured - at[0.3]) / (at[1.3] - at[0.3])
        lines.append(
            f"| {key} | {row['ideal']} | {measured:.1f} s | {at[0.3]:.1f} s | {at[1.3]:.1f} s"
            f" | {fitted:.2f} ms |"
        )
    return lines


def summary(key: str, rounds: list[Round]) -> str:
    afters = [r.after for r in rounds if r.after is not None]
    after = f"{statistics.median(afters):.3f} (worst {min(afters):.3f})" if afters else "n/a"
    wholes = [r.whole for r in rounds]
    return (
        f"| {key} | {statistics.median(wholes):.3f} (worst {min(wholes):.3f}) | {after} |"
        f" {sum(r.ended is None for r in rounds)} |"
        f" {', '.join(sorted({r.chosen.label() for r in rounds}))} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", help="bench workload keys (default: all sim ones)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--cpus", type=float, default=2.0)
    parser.add_argument("--handover-ms", type=float, default=Machine.handover_ms)
    parser.add_argument("--fork-ms", type=float, default=Machine.fork_ms)
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument(
        "--calibrate", type=Path, help="an online bench's folder: fit the hand-over"
    )
    parser.add_argument(
        "--start",
        type=parse_config,
        default=PYTORCH_DEFAULTS,
        help="the script's configuration (b) starts from, as the tables write it ('w4 pf2"
        " persist'); default torch's (w0); its tables go to a folder of their own",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help=f"the folder its tables go to; default {OUT}, or a folder of the start's in it",
    )
    args = parser.parse_args(argv)
    stamp = (
        f"# python benchmarks/climb_sim.py {' '.join(sys.argv[1:] if argv is None else argv)}"
        f" -- {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}; simulated, not measured"
    )
    out = OUT if args.out is None else args.out
    if args.out is None and args.start != PYTORCH_DEFAULTS:
        out = OUT / f"start-{args.start.label().replace(' ', '-')}"
    out.mkdir(parents=True, exist_ok=True)
    if args.calibrate is not None:
        lines = [stamp, *calibration(args.calibrate, args.workloads, args.steps, args.cpus)]
        print("\n".join(lines))
        (OUT / "calibration.out").write_text("\n".join(lines) + "\n")
        return
    table = [
        stamp,
        f"# hand-over {args.handover_ms:g} ms, fork {args.fork_ms:g} ms a worker, {args.seeds}"
        f" shuffles, {args.steps} steps, (b) from {args.start.label()}",
        "| workload | (b)/(c) whole, median | after tuning, median | never ended | (b) chose |",
        "|---|---:|---:|---:|---|",
    ]
    for key, text, spec in sim_workloads(args.workloads):

        def make(seed: int, spec: SimSpec = spec) -> Machine:
            return Machine(
                spec,
                cpus=args.cpus,
                fork_ms=args.fork_ms,
                handover_ms=args.handover_ms,
                jitter=args.jitter,
                seed=seed,
            )

        ideal = ideal_config(spec, args.steps, make)
        lines = [stamp, f"# {text}; (c): {ideal.label()}, the simulated grid's best"]
        rounds = []
        for seed in range(args.seeds):
            r = one_round(spec, ideal, args.steps, seed, lambda seed=seed: make(seed), args.start)
            rounds.append(r)
            after = "n/a" if r.after is None else f"{r.after:.3f}"
            lines.append(
                f"seed {seed}: (b) chose {r.chosen.label()} after {r.ended} steps;"
                f" (b)/(c) whole {r.whole:.3f}, after tuning {after}"
            )
        table.append(summary(key, rounds))
        print(table[-1], flush=True)
        (out / f"{key}.out").write_text("\n".join(lines) + "\n")
    (out / "table.out").write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
