"""`autotune bench --online`: per workload, a fixed training run three ways, alternating their
order by round: (a) the script's configuration (PyTorch's defaults unless --start names another),
(b) autotune.DataLoader starting from it, (c) the exhaustive grid's best from step 0, the ideal no
tuner can beat."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

import torch

from autotune import environment
from autotune.errors import OptionsError
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.online.session import TunerState
from autotune.workload.base import Workload
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from benchmarks.accuracy import parse_config
from benchmarks.online_figures import StepTimes, Way, order
from benchmarks.online_grid import GridFile, Ideal, file_best, ideal_config, read_grid_file
from benchmarks.online_loop import train
from benchmarks.online_model import OnlineReport, OnlineRow
from benchmarks.online_ranks import ideal_for_ranks, rank_candidates, train_ranks
from benchmarks.online_row import online_round, online_row, tuner_round
from benchmarks.online_short import hand_set_best
from benchmarks.options import OnlineBenchOptions
from benchmarks.provenance import git_commit
from benchmarks.workloads import BenchWorkload, select

Log = Callable[[str], None]


def online_options(
    opts: OnlineBenchOptions, device: torch.device, total_steps: int | None = None
) -> OnlineOptions:
    """(b)'s options: the defaults, nothing written, pin_memory tuned where the device is CUDA;
    the training's length where the workload's script would know it (a short run). Nothing
    remembered: each round's (b) tunes from the script's arguments, as a first run does."""
    given: dict[str, Any] = {
        "results_dir": None,
        "cuda": device.type == "cuda",
        "total_steps": total_steps,
        "memory": False,
    }
    if opts.max_workers is not None:
        given["max_workers"] = opts.max_workers
    return OnlineOptions(**given)


def train_way(
    way: Way,
    workload: Workload,
    device: torch.device,
    ideal: Ideal,
    opts: OnlineBenchOptions,
    what: str,
    total_steps: int | None = None,
) -> tuple[StepTimes, TunerState | None]:
    """One way's training; for (b), its tuner's state after the last step. The three ways differ
    in the loader alone: the training loop's own transfer knobs (non_blocking, channels_last,
    the side stream), which no DataLoader can set, are the ideal's in all three. Otherwise (b)
    is judged against a loop it cannot have: on the CPU demo, (b) chose `w1 pf2` and ran at 0.882
    of the grid's best `w8 pf4 cl`, which `w1 pf2 cl` had matched side by side (292 against 279
    samples/s in the offline bench)."""
    transfer = ideal.config.transfer_kwargs()
    steps = total_steps or opts.steps
    start = parse_config(opts.start)
    if way is Way.ONLINE:
        # Each (b) is a fresh training, as in its own process: without this, round 2 reused
        # round 1's choice (a re-created loader's, registry.py) after 0 steps of exploring.
        registry.reset()
        online = online_options(opts, device, total_steps)
        given = start.dataloader_kwargs()
        times, loader = train(
            workload,
            lambda: DataLoader(**workload.loader_arguments(), **given, online=online),
            device,
            transfer,
            steps,
            what,
        )
        return times, loader.tuner_state
    config = ideal.config if way is Way.IDEAL else start
    times, _ = train(workload, lambda: workload.make_loader(config), device, transfer, steps, what)
    return times, None


def ways(opts: OnlineBenchOptions, round_index: int) -> tuple[Way, ...]:
    """The round's ways in their order; (a) left out under --no-defaults."""
    return tuple(w for w in order(round_index) if opts.defaults or w is not Way.DEFAULTS)


def online_workload(
    bw: BenchWorkload, opts: OnlineBenchOptions, grid_file: GridFile | None, log: Log
) -> OnlineRow:
    workload = load_workload(bw.spec, WorkloadOptions(device=opts.device))
    device = workload.device or resolve_device(opts.device)
    steps = bw.online_steps or opts.steps
    ideal = (
        hand_set_best(bw.key, workload, device, steps, log)
        if bw.online_steps
        else ideal_config(
            bw,
            workload,
            device,
            grid_file,
            opts.grid_from,
            run_grid=opts.run_grid,
            max_workers=opts.max_workers,
            log=log,
        )
    )
    if opts.ranks > 1:
        del workload  # each rank loads its own
        return ranks_workload(bw, opts, ideal, device, log)
    log(f"[{bw.key}] ideal (c): {ideal.config.label()}, from {ideal.source}")
    rounds = []
    for r in range(opts.rounds):
        times: dict[Way, StepTimes] = {}
        tuner: TunerState | None = None
        round_ways = ways(opts, r)
        for way in round_ways:
            label = {
                Way.DEFAULTS: parse_config(opts.start).label(),
                Way.ONLINE: "autotune.DataLoader",
                Way.IDEAL: ideal.config.label(),
            }[way]
            what = f"{bw.key} {way} training ({label})"
            times[way], state = train_way(way, workload, device, ideal, opts, what, bw.online_steps)
            if state is not None:
                tuner = state
            log(
                f"[{bw.key}] round {r + 1}/{opts.rounds} {way} ({label}): {steps} steps in"
                f" {times[way].span(0, steps):.1f}s"
            )
        assert tuner is not None  # (b) runs in every round
        done = online_round(round_ways, times, tuner)
        log(
            f"[{bw.key}] round {r + 1}: (b) chose {done.chosen or 'nothing yet'} after"
            f" {done.exploration_steps if done.exploration_steps is not None else 'all'} steps;"
            f" (b)/(c) {done.whole:.3f} whole, after tuning"
            f" {'n/a' if done.after is None else f'{done.after:.3f}'}"
        )
        rounds.append(done)
    return online_row(bw, ideal, rounds, bw.online_steps)


def ranks_workload(
    bw: BenchWorkload, opts: OnlineBenchOptions, single: Ideal, device: torch.device, log: Log
) -> OnlineRow:
    """The workload as `opts.ranks` DDP ranks (online_ranks.py): (b), then the per-rank (c) among
    candidates that include (b)'s choice, in every round."""
    online, transfer = online_options(opts, device), single.config.transfer_kwargs()
    rounds, sources = [], []
    for r in range(opts.rounds):
        b = train_ranks(bw.spec, str(device), opts.ranks, opts.steps, None, online, transfer)
        log(
            f"[{bw.key}] round {r + 1}/{opts.rounds} (b): {opts.steps} steps x {opts.ranks} ranks"
            f" in {b.times.span(0, opts.steps):.1f}s; the ranks run {b.chosen}"
        )
        state = b.state or {}
        chosen = [parse_config(c) for c in (state.get("chosen"),) if c]
        candidates = list(
            dict.fromkeys(
                [
                    *rank_candidates(single.config, opts.ranks),
                    *(replace(c, **transfer) for c in chosen),
                ]
            )
        )
        config, how = ideal_for_ranks(bw.spec, str(device), opts.ranks, candidates, log)
        sources.append(how)
        c = train_ranks(bw.spec, str(device), opts.ranks, opts.steps, config, online, transfer)
        log(
            f"[{bw.key}] round {r + 1}/{opts.rounds} (c) {config.label()}: {opts.steps} steps x"
            f" {opts.ranks} ranks in {c.times.span(0, opts.steps):.1f}s"
        )
        rounds.append(
            tuner_round(
                (Way.ONLINE, Way.IDEAL),
                {Way.ONLINE: b.times, Way.IDEAL: c.times},
                state.get("exploration_ended_at"),
                state.get("exploration_cost_s", 0.0),
                state.get("stop_reason"),
                state.get("chosen"),
                b.chosen,
            )
        )
        log(
            f"[{bw.key}] round {r + 1}: (b)/(c) {rounds[-1].whole:.3f} whole, after tuning"
            f" {'n/a' if rounds[-1].after is None else f'{rounds[-1].after:.3f}'}"
        )
    ideal = Ideal(
        config,
        f"{'; '.join(sources)}; the single-process grid's best"
        f" {single.config.label()} from {single.source}",
    )
    return online_row(bw, ideal, rounds)


def run_online(opts: OnlineBenchOptions, log: Log, command: str) -> OnlineReport:
    t0 = time.perf_counter()
    grid_file = read_grid_file(opts.grid_from)
    if grid_file is None:
        log(f"{opts.grid_from}: no such file; each workload's grid is run here")
    if opts.steps < opts.min_steps:
        log(f"{opts.steps} steps per training: below the {opts.min_steps} a committed run needs")
    device = resolve_device(opts.device)
    chosen = select(opts.workloads, quick=False, online=True)
    if opts.ranks > 1 and any(bw.online_steps for bw in chosen):
        raise OptionsError(
            "bench --online --ranks does not run the short-run workloads"
            f" ({', '.join(bw.key for bw in chosen if bw.online_steps)}): name"
            " others with --workloads"
        )
    for bw in chosen:  # a workload without its ideal fails now, not after the others' trainings
        if not bw.online_steps:
            file_best(bw, device, grid_file, opts.grid_from, run_grid=opts.run_grid)
    rows = [online_workload(bw, opts, grid_file, log) for bw in chosen]
    return OnlineReport(
        command=command,
        commit=git_commit(),
        environment=environment.collect(device),
        steps=opts.steps,
        ranks=opts.ranks,
        defaults=opts.defaults and opts.ranks == 1,
        start=opts.start,
        min_steps=opts.min_steps,
        rounds=opts.rounds,
        grid_from=str(opts.grid_from),
        online=online_options(opts, device).model_dump(mode="json"),
        total_s=round(time.perf_counter() - t0, 1),
        rows=rows,
    )
