"""The record burst with the window's old capacity rule (every pull's wait counted as waiting) and
the new one (only pulls that found no finished batch), against the plain steady loop, one
configuration, alternating by round."""
import sys, statistics, torch, warnings; warnings.filterwarnings("ignore")
from autotune.burst import window as W
import autotune.burst.runner as R
from autotune.workload.spec import load_workload
from autotune.space.config import LoaderConfig
from autotune.burst.runner import run_burst, BurstSettings
from autotune.verify.steady import measure_steady
spec, cfgs, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
w = load_workload(spec); dev = torch.device("cpu")
d = dict(kv.split("=") for kv in cfgs.split(";"))
config = LoaderConfig(num_workers=int(d.get("w", 0)), prefetch_factor=int(d["pf"]) if "pf" in d else None,
                      persistent_workers=d.get("persist") == "1", channels_last=d.get("cl") == "1")
print(config.label(), flush=True)
new_mark = W.next_mark
def old_mark(marks, t, samples, backlog, waited):
    m = new_mark(marks, t, samples, backlog, waited)
    return W.Mark(m.t, m.samples, m.backlog, m.waited, None)
rec = BurstSettings(min_steps=8, min_seconds=3.0, max_seconds=3.0, warmup_steps=2, time_limit_s=60)
res = {"old": [], "new": [], "steady10": []}
for r in range(rounds):
    for name, fn in (("old", old_mark), ("new", new_mark)):
        R.next_mark = fn
        res[name].append(run_burst(w, config, dev, rec, usable_cpus=2).samples_per_s)
    res["steady10"].append(measure_steady(w, config, dev, 10.0).samples_per_s)
    print(r, {k: round(v[-1]) for k, v in res.items()}, flush=True)
for k, v in res.items():
    print(k, "median", round(statistics.median(v)), "cv %.3f" % (statistics.pstdev(v) / statistics.mean(v)))
