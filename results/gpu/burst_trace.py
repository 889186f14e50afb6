"""Where a burst's scatter on a GPU comes from: start-up, warm-up, the clocks, or the window's
length. Per round and configuration, alternating: a CPU speed probe and the GPU's clocks, one trial
burst exactly as the tuner runs it (its phases and rates), then a plain training loop on a fresh
pool of the same configuration with every step's time recorded for `--seconds`, while a thread
reads the GPU's SM clock and the host's CPU use every 0.25 s. The traces then say how a window's
rate depends on when it starts after the pool's start and on how long it is.

    python3 results/gpu/burst_trace.py --out DIR [--configs 'w8 pf2 pin persist nb cl;...'] \
        [--rounds 2] [--seconds 14]

Writes DIR/burst_trace.json (raw) and prints the analysis (analyse() reads the JSON back too:
`python3 results/gpu/burst_trace.py --analyse DIR/burst_trace.json`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def cpu_probe() -> float:
    """Seconds for a fixed single-thread Python loop: the host core's speed now."""
    t = time.perf_counter()
    total = 0
    for i in range(1_500_000):
        total += i * i % 7
    return time.perf_counter() - t


class Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.rows: list[tuple[float, float | None, float]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        import psutil

        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # no NVML: clocks are n/a
            handle = None
        psutil.cpu_percent()
        while not self.halt.wait(0.25):
            clock = None
            if handle is not None:
                clock = float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
            self.rows.append((time.perf_counter(), clock, psutil.cpu_percent()))


def cores_first() -> list[int]:
    """This process's CPUs, one per physical core first, then their SMT siblings."""
    import os

    mine = sorted(os.sched_getaffinity(0))
    firsts, rest = [], []
    for cpu in mine:
        try:
            text = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text()
            lo = int(text.replace("-", ",").split(",")[0])
        except OSError:
            lo = cpu
        (firsts if lo == cpu else rest).append(cpu)
    return firsts + rest


PINNED: list[int] = []


def pin_worker(then, worker_id: int) -> None:
    import os

    os.sched_setaffinity(0, {PINNED[worker_id % len(PINNED)]})
    if then is not None:
        then(worker_id)


def pinned_loader(workload, config):
    import functools

    from torch.utils.data import DataLoader

    args = workload.loader_arguments()
    args["worker_init_fn"] = functools.partial(pin_worker, args.get("worker_init_fn"))
    return DataLoader(**args, **config.dataloader_kwargs())


def trace(workload, config, device, seconds: float, pin: bool = False) -> dict:
    import torch

    from autotune.verify.steady import training_feed

    sampler = Sampler()
    sampler.start()
    t_begin = time.perf_counter()
    steps: list[float] = []
    make = ((lambda: pinned_loader(workload, config)) if pin and config.num_workers
            else (lambda: workload.make_loader(config)))
    with training_feed(make, device, config.transfer_kwargs(),
                       4 * seconds + 60, f"trace of {config.label()}") as (_, batches, _epochs):
        while True:
            batch = next(batches)
            workload.step(batch)
            now = time.perf_counter()
            steps.append(now - t_begin)
            if now - t_begin >= seconds:
                break
        if device.type == "cuda":
            torch.cuda.synchronize()
        steps[-1] = time.perf_counter() - t_begin
    sampler.halt.set()
    sampler.join()
    return {"steps": [round(s, 5) for s in steps],
            "samples": [(round(t - t_begin, 3), c, p) for t, c, p in sampler.rows]}


def window_rate(steps: list[float], start: float, length: float, batch: int) -> float | None:
    inside = [s for s in steps if start <= s <= start + length]
    if len(inside) < 2:
        return None
    return (len(inside) - 1) * batch / (inside[-1] - inside[0])


def analyse(raw: dict) -> str:
    batch = raw["batch_size"]
    out = []
    for config in raw["configs"]:
        rows = [r for r in raw["rounds"] if r["config"] == config]
        out.append(f"== {config}")
        for r in rows:
            b = r["burst"]
            out.append(f"  round {r['round']}: cpu probe {r['cpu_probe_s']:.3f}s, SM clock"
                       f" {r['sm_clock_before']} MHz; burst {b['samples_per_s']:.1f}/s (window"
                       f" {b['steady_samples_per_s']:.1f}/s over {b['window_s']:.2f}s, {b['steps']}"
                       f" steps, start-up {b['startup_s']:.2f}s, warm-up {b['warmup_s']:.2f}s,"
                       f" backlog {b['backlog_start']}->{b['backlog_end']}, steady {b['steady']})")
            steps = r["trace"]["steps"]
            steady = window_rate(steps, 2.0, 6.0, batch)
            firsts = [window_rate(steps, s, 3.0, batch) for s in (0.5, 1.0, 1.5, 2.0)]
            later = [window_rate(steps, 2.0 + 0.5 * k, 3.0, batch) for k in range(0, 18)]
            later = [x for x in later if x]
            bins = [window_rate(steps, float(k), 1.0, batch) for k in range(int(steps[-1]))]
            clocks = [c for _, c, _ in r["trace"]["samples"] if c is not None]
            cpu = [p for _, _, p in r["trace"]["samples"]]
            out.append(f"    trace: first batch at {steps[0]:.2f}s; 6 s after 2 s: {steady:.1f}/s;"
                       f" 3 s windows from 0.5/1/1.5/2 s: {', '.join(f'{x:.0f}' for x in firsts if x)};"
                       f" 3 s windows sliding from 2 s: cv"
                       f" {100 * statistics.pstdev(later) / statistics.mean(later):.1f}%"
                       f" (min {min(later):.0f}, max {max(later):.0f});"
                       f" burst / trace steady {b['samples_per_s'] / steady:.3f}")
            out.append("    1 s bins: " + " ".join(f"{x:.0f}" if x else "-" for x in bins))
            if clocks:
                out.append(f"    SM clock during trace: min {min(clocks):.0f}, median"
                           f" {statistics.median(clocks):.0f}, max {max(clocks):.0f} MHz;"
                           f" host CPU median {statistics.median(cpu):.0f}%")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--configs", default="w8 pf2 pin persist nb cl;w16 pf2 pin persist nb cl")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=14.0)
    ap.add_argument("--workload", default="demo")
    ap.add_argument("--analyse", type=Path)
    ap.add_argument("--pin-workers", action="store_true", help="each worker on a CPU of its own,"
                    " one per physical core first")
    ap.add_argument("--cpus", default="", help="run on these CPUs only (e.g. 0-7 or 0,2,4): does a"
                    " placement on SMT siblings make the rate fluctuate?")
    opts = ap.parse_args()
    if opts.analyse:
        print(analyse(json.loads(opts.analyse.read_text())))
        return

    import torch

    from benchmarks.accuracy import parse_config
    from autotune.burst.runner import BurstSettings, run_burst
    from autotune import environment
    from autotune.space.cpus import usable_cpus
    from benchmarks.provenance import git_commit
    from autotune.workload.options import WorkloadOptions
    from autotune.workload.spec import load_workload

    PINNED[:] = cores_first()
    if opts.cpus:
        import os

        wanted = set()
        for part in opts.cpus.split(","):
            lo, _, hi = part.partition("-")
            wanted.update(range(int(lo), int(hi or lo) + 1))
        os.sched_setaffinity(0, wanted)  # the workers inherit it
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    workload = load_workload(opts.workload, WorkloadOptions(device=str(device)))
    configs = [c.strip() for c in opts.configs.split(";")]
    cpus = usable_cpus().count
    # The device's one-time warm-up (cudnn's autotuning, the allocator) before anything is timed,
    # as the tuner does before its trials.
    run_burst(workload, parse_config(configs[0]), device, BurstSettings(), usable_cpus=cpus)
    raw = {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "command": "python3 results/gpu/burst_trace.py " + " ".join(sys.argv[1:]),
           "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else None,
           "commit": git_commit(), "environment": environment.collect(device),
           "batch_size": workload.batch_size, "configs": configs, "cpus": opts.cpus or None,
           "pinned_workers": PINNED if opts.pin_workers else None,
           "rounds": []}
    opts.out.mkdir(parents=True, exist_ok=True)
    for rnd in range(opts.rounds):
        for label in (configs if rnd % 2 == 0 else configs[::-1]):
            config = parse_config(label)
            probe = cpu_probe()
            s = Sampler()
            s.start()
            time.sleep(0.3)
            s.halt.set()
            s.join()
            clock = s.rows[-1][1] if s.rows else None
            burst = run_burst(workload, config, device, BurstSettings(), usable_cpus=cpus)
            b = {k: getattr(burst, k) for k in ("samples_per_s", "steady_samples_per_s", "window_s",
                                                 "steps", "startup_s", "warmup_s", "steady",
                                                 "backlog_start", "backlog_end", "duration_s")}
            t = trace(workload, config, device, opts.seconds, opts.pin_workers)
            raw["rounds"].append({"round": rnd + 1, "config": label, "cpu_probe_s": probe,
                                  "sm_clock_before": clock, "burst": b, "trace": t})
            (opts.out / "burst_trace.json").write_text(json.dumps(raw))
            print(f"[trace] round {rnd + 1} {label}: burst {b['samples_per_s']:.1f}/s,"
                  f" {len(t['steps'])} traced steps", flush=True)
    print(analyse(raw), flush=True)


if __name__ == "__main__":
    main()
