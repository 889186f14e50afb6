"""tiny-epochs: side-by-side burst settings vs a plain loop over whole epochs, two configs alternating."""
import sys, time, statistics
from autotune.bench.accuracy import parse_config
from autotune.burst.runner import run_burst, BurstSettings
from autotune.space.cpus import usable_cpus
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.device import resolve_device
spec = 'sim:cpu_ms=0.5,io_ms=1,step_ms=8,batch=16,length=480,open_ms=400'
wl = load_workload(spec, WorkloadOptions(device="cpu")); dev = wl.device or resolve_device("cpu"); cpus = usable_cpus().count
S = BurstSettings(min_steps=12, min_seconds=1.0, max_seconds=4.0, warmup_steps=2)
def plain(cfg, seconds=6.0):
    loader = wl.make_loader(cfg)
    for b in loader: wl.step(b)
    for b in loader: wl.step(b)
    n = 0; t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b in loader: wl.step(b); n += 1
    dt = time.perf_counter() - t0; del loader
    return n * wl.batch_size / dt
for r in range(3):
    for label in (("w5 pf2 persist", "w3 pf2 persist") if r % 2 == 0 else ("w3 pf2 persist", "w5 pf2 persist")):
        cfg = parse_config(label)
        b = run_burst(wl, cfg, dev, S, usable_cpus=cpus)
        p = plain(cfg)
        print(f"round {r+1} {label}: burst {b.samples_per_s:.0f} (window {b.window_s:.2f}s, {b.steps} steps, epochs {b.window_epochs}, restart {b.restart_cost_s*1e3:.0f} ms) | plain whole epochs {p:.0f} | ratio {b.samples_per_s/p:.3f}", flush=True)
