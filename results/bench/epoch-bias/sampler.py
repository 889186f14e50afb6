"""Does the burst's host sampler (or the first epoch of a fresh pool) slow the window? Alternating."""
import sys, statistics
import autotune.burst.runner as runner
from autotune.bench.accuracy import parse_config
from autotune.search.options import BurstOptions
from autotune.space.cpus import usable_cpus
from autotune.verify.steady import measure_steady
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.workload.device import resolve_device

class NoSampler:
    def __init__(self, *a, **k): pass
    def start(self): pass
    def stop(self): return None
    def halt(self): pass

spec, label, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
wl = load_workload(spec, WorkloadOptions(device="cpu")); dev = wl.device or resolve_device("cpu")
cfg = parse_config(label); cpus = usable_cpus().count
Real = runner.HostSampler
res = {"sampler": [], "none": [], "steady": []}
for r in range(rounds):
    for name in ("sampler", "none"):
        runner.HostSampler = Real if name == "sampler" else NoSampler
        try:
            b = runner.run_burst(wl, cfg, dev, BurstOptions().settings(full_window=True), usable_cpus=cpus)
            res[name].append(b.samples_per_s)
            print(name, round(b.samples_per_s), "steady-part", round(b.steady_samples_per_s), "epochs", b.window_epochs, flush=True)
        except Exception as e:
            print(name, "failed", type(e).__name__, e, flush=True)
    st = measure_steady(wl, cfg, dev, 5.0); res["steady"].append(st.samples_per_s)
    print("steady", round(st.samples_per_s), flush=True)
print({k: round(statistics.median(v)) for k, v in res.items() if v})
