import sys, time, warnings, cProfile, pstats; warnings.filterwarnings("ignore")
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
w = load_workload("mem:step_ms=2,batch=256,shape=32,length=262144", WorkloadOptions(device="cpu"))
def loop(loader, n=1500):
    it = iter(loader); t = time.perf_counter()
    for _ in range(n):
        try: b = next(it)
        except StopIteration:
            it = iter(loader); b = next(it)
        w.step(b)
    return n / (time.perf_counter() - t)
from autotune.bench.accuracy import parse_config
for r in range(2):
    registry.reset()
    fixed = DataLoader(**w.loader_arguments(), online=OnlineOptions(results_dir=None, cuda=False, fixed=("num_workers","prefetch_factor","persistent_workers","pin_memory")))
    plain = w.make_loader(parse_config("w0"))
    print("plain w0 %.1f  online-wrapper w0 (all fixed) %.1f" % (loop(plain), loop(fixed)))
registry.reset()
fixed = DataLoader(**w.loader_arguments(), online=OnlineOptions(results_dir=None, cuda=False, fixed=("num_workers","prefetch_factor","persistent_workers","pin_memory")))
pr = cProfile.Profile(); pr.enable(); loop(fixed, 800); pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
