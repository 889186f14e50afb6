"""Short-run (b) against (c) w4 pf4 persist and (c5) w5 pf2 persist, per 16-step epoch, in alternated rounds (python results/bench/short-run/epochs.py ROUNDS)."""
import sys, time
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.bench.accuracy import parse_config
import warnings; warnings.filterwarnings("ignore")
SPEC = "sim:cpu_ms=0,io_ms=5,step_ms=40,batch=32,length=512"
STEPS = 160
w = load_workload(SPEC, WorkloadOptions(device="cpu"))

def run(make):
    loader = make(); stamps = []
    t0 = time.perf_counter(); it = iter(loader)
    for _ in range(STEPS):
        try: b = next(it)
        except StopIteration:
            it = iter(loader); b = next(it)
        w.step(b); stamps.append(time.perf_counter() - t0)
    if hasattr(loader, "close"): loader.close()
    return stamps

ways = {"c": lambda: w.make_loader(parse_config("w4 pf4 persist")),
        "c5": lambda: w.make_loader(parse_config("w5 pf2 persist")),
        "b": lambda: (registry.reset(), DataLoader(**w.loader_arguments(), online=OnlineOptions(results_dir=None, cuda=False, total_steps=STEPS)))[1]}
tot = {k: [] for k in ways}
per = {k: [] for k in ways}
for r in range(int(sys.argv[1])):
    order = list(ways) if r % 2 == 0 else list(reversed(ways))
    for k in order:
        s = run(ways[k]); tot[k].append(s[-1])
        per[k].append([s[0], s[1]] + [s[e*16+15] - (s[e*16-1] if e else 0) for e in range(10)])
for k in ways:
    print(k, "totals", [round(x, 2) for x in tot[k]], "mean", round(sum(tot[k])/len(tot[k]), 3))
    n = len(per[k]); avg = [sum(p[i] for p in per[k])/n for i in range(12)]
    print("   step0 %.3f step1 %.3f | epochs %s" % (avg[0], avg[1], " ".join("%.3f" % a for a in avg[2:])))
