"""in-memory: plain torch w0, w1 pf1 persist, w1 pf2 persist, and the online loader with every knob
fixed at w1 pf2 persist; batches/s over 1500 steps, alternated rounds."""
import sys, time, warnings; warnings.filterwarnings("ignore")
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.bench.accuracy import parse_config
w = load_workload("mem:step_ms=2,batch=256,shape=32,length=262144", WorkloadOptions(device="cpu"))
ALL = ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")
def loop(loader, n=1500):
    it = iter(loader)
    for _ in range(20): w.step(next(it))
    t = time.perf_counter()
    for _ in range(n):
        try: b = next(it)
        except StopIteration:
            it = iter(loader); b = next(it)
        w.step(b)
    r = n / (time.perf_counter() - t)
    if hasattr(loader, "close"): loader.close()
    return r
def online_fixed():
    registry.reset()
    args = {**w.loader_arguments(), "num_workers": 1, "prefetch_factor": 2, "persistent_workers": True}
    return DataLoader(**args, online=OnlineOptions(results_dir=None, cuda=False, fixed=ALL))
ways = {"plain w0": lambda: w.make_loader(parse_config("w0")),
        "plain w1 pf1 persist": lambda: w.make_loader(parse_config("w1 pf1 persist")),
        "plain w1 pf2 persist": lambda: w.make_loader(parse_config("w1 pf2 persist")),
        "online fixed w1 pf2 persist": online_fixed}
res = {k: [] for k in ways}
for r in range(int(sys.argv[1])):
    for k in (list(ways) if r % 2 == 0 else list(reversed(ways))):
        res[k].append(round(loop(ways[k]()), 1))
for k, v in res.items():
    print(f"{k:30s} {v} mean {sum(v)/len(v):.1f}")
