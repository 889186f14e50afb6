"""Does a record burst's shrunk window (Budget.window_cap at a spent budget) read low?"""
import sys, statistics, json
from autotune.bench.accuracy import parse_config
from autotune.burst.runner import run_burst
from autotune.search.options import BurstOptions
from autotune.space.cpus import usable_cpus
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.device import resolve_device
from autotune.bench.workloads import select

key, label, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
caps = [float(x) for x in sys.argv[4].split(",")]
bw = select([key], False)[0]
wl = load_workload(bw.spec, WorkloadOptions(device="cpu"))
dev = wl.device or resolve_device("cpu")
cfg = parse_config(label)
cpus = usable_cpus().count
out = {c: [] for c in caps}
for r in range(rounds):
    for c in caps:
        s = BurstOptions().settings(c, full_window=True)
        b = run_burst(wl, cfg, dev, s, usable_cpus=cpus)
        out[c].append((round(b.samples_per_s, 1), round(b.window_s, 2), b.steps, round(b.duration_s, 2)))
        print(key, label, "cap", c, out[c][-1], flush=True)
for c in caps:
    rates = [x[0] for x in out[c]]
    print(key, label, "cap", c, "median", statistics.median(rates), "ratio to full",
          round(statistics.median(rates) / statistics.median([x[0] for x in out[caps[0]]]), 3))
