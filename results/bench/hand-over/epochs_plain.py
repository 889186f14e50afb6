import sys, time, statistics, torch, warnings; warnings.filterwarnings("ignore")
from autotune.workload.spec import load_workload
from autotune.space.config import LoaderConfig
from autotune.transfer.device_loader import DeviceLoader
w = load_workload(sys.argv[1]); d = dict(kv.split("=") for kv in sys.argv[2].split(";"))
config = LoaderConfig(num_workers=int(d["w"]), prefetch_factor=int(d["pf"]), persistent_workers=d.get("persist") == "1")
loader = w.make_loader(config)
feed = DeviceLoader(loader, torch.device("cpu"), **config.transfer_kwargs())
for epoch in range(int(sys.argv[3])):
    t = time.perf_counter(); steps = []; waits = []
    it = iter(feed)
    while True:
        t0 = time.perf_counter()
        try: b = next(it)
        except StopIteration: break
        t1 = time.perf_counter(); w.step(b); t2 = time.perf_counter()
        steps.append(t2 - t0); waits.append(t1 - t0)
    total = time.perf_counter() - t
    n = len(steps)
    print(f"epoch {epoch}: {n} steps {total:.3f}s  first {steps[0]*1e3:.1f}ms  median step {statistics.median(steps)*1e3:.2f}ms"
          f" mean step {statistics.mean(steps[1:])*1e3:.2f}ms  mean wait {statistics.mean(waits[1:])*1e3:.2f}ms  steps>30ms {sum(s>0.03 for s in steps)}"
          f"  mean step last 40 {statistics.mean(steps[-40:])*1e3:.2f}  first 40 {statistics.mean(steps[1:41])*1e3:.2f}", flush=True)
