"""Is the burst-vs-steady gap the epoch boundary? Steady windows on the bench's dataset length
(4096 items: an epoch every ~6-9 s) against the same workload with 1,000,000 items (no epoch end
inside a window), and the burst, alternating, 2 rounds."""
import statistics, sys, torch
from autotune.burst.runner import run_burst
from autotune.search.options import BurstOptions
from autotune.space.config import LoaderConfig
from autotune.verify.steady import measure_steady
from autotune.workload.spec import load_workload

cases = [("sim:cpu_ms=4,step_ms=10,batch=16", "w8 pf4"),
         ("sim:cpu_ms=0.5,step_ms=10,batch=16,shape=3x256x256", "w8 pf4 persist")]
settings = BurstOptions().settings(None)
cpu = torch.device("cpu")
for spec, label in cases:
    config = LoaderConfig.from_label(label)
    short, long = load_workload(spec), load_workload(spec + ",length=1000000")
    rows = {"burst": [], "steady 4096": [], "steady 1e6": []}
    for r in range(2):
        rows["burst"].append(run_burst(short, config, cpu, settings, usable_cpus=2).samples_per_s)
        rows["steady 4096"].append(measure_steady(short, config, cpu, 10, settle_s=2).samples_per_s)
        rows["steady 1e6"].append(measure_steady(long, config, cpu, 10, settle_s=2).samples_per_s)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{spec} {label}: " + ", ".join(f"{k} {[round(x,1) for x in v]}" for k, v in rows.items()))
    print(f"   burst/steady4096 {med['burst']/med['steady 4096']:.3f}  burst/steady1e6 {med['burst']/med['steady 1e6']:.3f}")
    sys.stdout.flush()
