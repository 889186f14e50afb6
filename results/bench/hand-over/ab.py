"""A/B: the record burst (burst runner, full window) vs the plain steady loop, same config, alternating."""
import sys, time, statistics, torch
from autotune.workload.spec import load_workload
from autotune.space.config import LoaderConfig
from autotune.burst.runner import run_burst, BurstSettings
from autotune.verify.steady import measure_steady

spec, cfgs, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
w = load_workload(spec)
dev = torch.device("cpu")
def parse(s):
    d = dict(kv.split("=") for kv in s.split(";"))
    return LoaderConfig(num_workers=int(d.get("w", 0)), prefetch_factor=int(d["pf"]) if "pf" in d else None,
                        persistent_workers=d.get("persist") == "1")
config = parse(cfgs)
print(config.label())
rec = BurstSettings(min_steps=8, min_seconds=3.0, max_seconds=3.0, warmup_steps=2, time_limit_s=60)
res = {"record": [], "record_steady": [], "steady3": [], "steady10": []}
for r in range(rounds):
    b = run_burst(w, config, dev, rec, usable_cpus=2)
    res["record"].append(b.samples_per_s); res["record_steady"].append(b.steady_samples_per_s)
    res["steady3"].append(measure_steady(w, config, dev, 3.0).samples_per_s)
    res["steady10"].append(measure_steady(w, config, dev, 10.0).samples_per_s)
    print(r, {k: round(v[-1]) for k, v in res.items()}, flush=True)
for k, v in res.items():
    print(k, "median", round(statistics.median(v)), "mean", round(statistics.mean(v)), "cv %.3f" % (statistics.pstdev(v)/statistics.mean(v)))
