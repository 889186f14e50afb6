import sys, time, warnings; warnings.filterwarnings("ignore")
from autotune.online import registry
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions
w = load_workload("mem:step_ms=2,batch=256,shape=32,length=262144", WorkloadOptions(device="cpu"))
for r in range(int(sys.argv[1])):
    registry.reset()
    loader = DataLoader(**w.loader_arguments(), online=OnlineOptions(results_dir=None, cuda=False))
    it = iter(loader); n = 0
    while loader.tuner_state.exploring and n < 3000:
        try: b = next(it)
        except StopIteration:
            it = iter(loader); b = next(it)
        w.step(b); n += 1
    st = loader.tuner_state
    print(r, n, st.stop_reason, st.chosen.label() if st.chosen else None, {k: round(v, 1) for k, v in st.measured.items()})
    loader.close()
