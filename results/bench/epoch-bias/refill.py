"""Burst epoch figures (window, first batch, restart cost) against a plain loop's boundary, alternating."""
import sys, time, statistics
from autotune.bench.accuracy import parse_config
from autotune.burst.runner import run_burst
from autotune.search.options import BurstOptions
from autotune.space.cpus import usable_cpus
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.device import resolve_device
spec, label, rounds, full = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "full"
wl = load_workload(spec, WorkloadOptions(device="cpu")); dev = wl.device or resolve_device("cpu")
cfg = parse_config(label); cpus = usable_cpus().count
def plain(n_epochs):
    loader = wl.make_loader(cfg)
    for b in loader: wl.step(b)
    bounds, inner, eps = [], [], []
    t_prev = time.perf_counter()
    for _ in range(n_epochs):
        t0 = time.perf_counter(); it = iter(loader); b = next(it); wl.step(b); t1 = time.perf_counter()
        bounds.append(t1 - t_prev); n = 1
        for b in it: wl.step(b); n += 1
        t2 = time.perf_counter(); inner.append((t2 - t1) / (n - 1)); eps.append(n * wl.batch_size / (t2 - t_prev)); t_prev = t2
    del loader
    return statistics.median(bounds), statistics.median(inner), statistics.median(eps)
for r in range(rounds):
    b = run_burst(wl, cfg, dev, BurstOptions().settings(full_window=full), usable_cpus=cpus)
    bd, st, ep = plain(5)
    print(f"round {r+1}: burst epoch {b.samples_per_s:.0f} steady {b.steady_samples_per_s:.0f} first_batch {b.first_batch_s*1e3:.0f} ms"
          f" restart {b.restart_cost_s*1e3:.0f} ms window {b.window_s:.2f}s {b.steps} steps epochs {b.window_epochs} steady-flag {b.steady} |"
          f" plain: epoch {ep:.0f}/s boundary step {bd*1e3:.0f} ms inner step {st*1e3:.1f} ms -> steady {wl.batch_size/st:.0f}, cost {(bd-st)*1e3:.0f} ms", flush=True)
