"""Burst's whole-epoch estimate vs a plain loop's, and the boundary cost each implies, alternating."""
import sys, time, statistics
from autotune.bench.accuracy import parse_config
from autotune.burst.runner import run_burst
from autotune.search.options import BurstOptions
from autotune.space.cpus import usable_cpus
from autotune.verify.steady import measure_steady
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.device import resolve_device

spec, label, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
wl = load_workload(spec, WorkloadOptions(device="cpu")); dev = wl.device or resolve_device("cpu")
cfg = parse_config(label); cpus = usable_cpus().count

def plain_epochs(n_epochs):
    """A training loop: epoch times, and the step interval inside the epoch (after its first batch)."""
    loader = wl.make_loader(cfg)
    for b in loader: wl.step(b)  # first epoch: start-up, not counted
    times, firsts, inner = [], [], []
    for _ in range(n_epochs):
        t0 = time.perf_counter(); it = iter(loader); b = next(it); t1 = time.perf_counter()
        wl.step(b); n = 1
        for b in it: wl.step(b); n += 1
        t2 = time.perf_counter()
        times.append(t2 - t0); firsts.append(t1 - t0); inner.append((t2 - t1) / n)
    del loader
    return times, firsts, inner, n

for r in range(rounds):
    s = BurstOptions().settings(full_window=True)
    b = run_burst(wl, cfg, dev, s, usable_cpus=cpus)
    times, firsts, inner, n = plain_epochs(40)
    ep_s = statistics.median(times); step = statistics.median(inner)
    samples = n * wl.batch_size
    st = measure_steady(wl, cfg, dev, 10.0)
    print(f"round {r+1}: burst epoch-rate {b.samples_per_s:.0f} steady-part {b.steady_samples_per_s:.0f}"
          f" first_batch {b.first_batch_s*1e3:.1f} ms restart_cost {b.restart_cost_s*1e3:.1f} ms epochs-in-window {b.window_epochs} |"
          f" plain: epoch {ep_s*1e3:.1f} ms ({n} steps) -> {samples/ep_s:.0f} samples/s; first batch {statistics.median(firsts)*1e3:.1f} ms;"
          f" step in epoch {step*1e3:.2f} ms; boundary cost {(ep_s - n*step)*1e3:.1f} ms | verify.steady {st.samples_per_s:.0f}", flush=True)
