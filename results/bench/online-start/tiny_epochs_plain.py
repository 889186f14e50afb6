"""tiny-epochs in plain torch loops: the online climb's configurations and the grid's best, each
persistent, 3,000 steps over 30-step epochs re-iterated as training does, alternated over two
rounds. Does the online choice (w4 pf4 persist) lose against the grid's w3 pf2 persist by itself,
or through the online loader? An experiment's tool, not a bench: prints, writes nothing.

    PYTHONPATH=. python results/bench/online-start/tiny_epochs_plain.py
"""

import time

import torch

from autotune.bench.workloads import select
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

w = load_workload(select(["tiny-epochs"], False, online=True)[0].spec, WorkloadOptions())
args = w.loader_arguments()


def run(nw, pf, persist, steps=3000):
    loader = torch.utils.data.DataLoader(**{**args, "num_workers": nw, "prefetch_factor": pf,
                                            "persistent_workers": persist})
    it = iter(loader)
    t0 = time.perf_counter()
    firsts = []
    for _ in range(steps):
        try:
            b = next(it)
        except StopIteration:
            t = time.perf_counter()
            it = iter(loader)
            b = next(it)
            firsts.append(time.perf_counter() - t)
        w.step(b)
    total = time.perf_counter() - t0
    del it, loader
    return total, sum(firsts) / max(1, len(firsts)), len(firsts)


cfgs = [(3, 2), (4, 4), (4, 2), (3, 4)]
for r in range(2):
    for nw, pf in (cfgs if r == 0 else cfgs[::-1]):
        total, first, n = run(nw, pf, True)
        print(f"round {r} w{nw} pf{pf} persist: {total:.2f} s, {1e3*total/3000:.2f} ms/step, epoch"
              f" first batch {1e3*first:.1f} ms x {n}", flush=True)
