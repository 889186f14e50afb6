"""demo in plain torch loops: w1 pf2 against w2 pf2 and w3 pf2 (persistent), alternated over two
rounds of 400 steps after 30 to settle, measuring the wait inside __next__ and the loop's own work
(the step), in wall and process CPU time. Does w1 pf2, fed (it hardly waits), run slower than w2
by itself, as demo's online rounds 1-2 read (0.85-0.87 of the ideal against round 3's w2 at 0.99)?
An experiment's tool, not a bench: prints, writes nothing.

    PYTHONPATH=. python results/bench/online-start-rest/demo_fed.py
"""

import time

import torch

from autotune.bench.workloads import select
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

w = load_workload(select(["demo"], False, online=True)[0].spec, WorkloadOptions())
args = w.loader_arguments()

def run(nw, pf, steps=400):
    loader = torch.utils.data.DataLoader(**{**args, "num_workers": nw, "prefetch_factor": pf,
                                            "persistent_workers": True})
    it = iter(loader)
    for _ in range(30):  # settle
        try: b = next(it)
        except StopIteration: it = iter(loader); b = next(it)
        w.step(b)
    wait = work = work_cpu = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        a = time.perf_counter()
        try: b = next(it)
        except StopIteration: it = iter(loader); b = next(it)
        c = time.perf_counter(); cc = time.process_time()
        w.step(b)
        d = time.perf_counter(); dd = time.process_time()
        wait += c - a; work += d - c; work_cpu += dd - cc
    total = time.perf_counter() - t0
    del it, loader
    return total / steps, wait / total, work / steps, work_cpu / steps

print("threads", torch.get_num_threads())
cfgs = [(1, 2), (2, 2), (3, 2)]
for r in range(2):
    for nw, pf in (cfgs if r == 0 else cfgs[::-1]):
        step, wait, work, cpu = run(nw, pf)
        print(f"round {r} w{nw} pf{pf}: {1e3*step:.1f} ms/step, wait {100*wait:.1f}%, step work {1e3*work:.1f} ms wall {1e3*cpu:.1f} ms CPU", flush=True)
