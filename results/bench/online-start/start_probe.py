"""The online start on a bench workload: the w0 measurement the prediction reads, and what the climb tried."""
import sys, time
from autotune.bench.workloads import select
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
key, steps = sys.argv[1], int(sys.argv[2])
workload = load_workload(select([key], False, online=True)[0].spec, WorkloadOptions())
registry.reset()
loader = DataLoader(**workload.loader_arguments(), online=OnlineOptions(results_dir=None))
it = iter(loader); t0 = time.perf_counter()
for i in range(steps):
    try: b = next(it)
    except StopIteration: it = iter(loader); b = next(it)
    workload.step(b)
    if not loader._session.policy.exploring: break
c = loader._session.policy
for cfg, m in c.measured.items():
    print(f"{cfg.label():22s} steps={m.steps} steady={m.steady_steps} s={m.steady_s:.3f} wait={m.steady_wait_s:.3f}"
          f" wait_cpu={m.steady_wait_cpu_s:.3f} work_cpu={m.steady_work_cpu_s:.3f} rates={[round(r,2) for r in m.rates]} starved={m.starved}")
print("stop", c.stop_reason, "best", c.best.config.label(), "after", i + 1, "steps", round(time.perf_counter() - t0, 1), "s")
loader.close()
