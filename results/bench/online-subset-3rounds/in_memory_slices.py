"""in-memory, plain torch: the rate in successive 40-step slices of 400 steps from the first iter(), w1 pf2 persist and w0 alternated."""
import time, warnings; warnings.filterwarnings("ignore")
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
from autotune.bench.accuracy import parse_config
w = load_workload("mem:step_ms=2,batch=256,shape=32,length=262144", WorkloadOptions(device="cpu"))
for cfg in ("w1 pf2 persist", "w0", "w1 pf2 persist", "w0"):
    loader = w.make_loader(parse_config(cfg)); it = iter(loader); st = []
    t0 = time.perf_counter()
    for i in range(400):
        w.step(next(it)); st.append(time.perf_counter() - t0)
    # rate in successive 40-step slices
    sl = [40 / (st[k+39] - (st[k-1] if k else 0)) for k in range(0, 400, 40)]
    print(cfg, " ".join("%.0f" % x for x in sl))
    del it, loader
