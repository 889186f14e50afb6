"""Does the GPU's burst bias (results/gpu/2026-11-26-h200.md: bursts 0.875 of steady windows on
an H200) appear on a CPU workload shaped like that case? Each case alternates a trial burst (the
tuner's own settings) and a 10 s steady window of the plain loop, on one configuration:

  convoy      14 workers that wait 480 ms a batch on storage and a 35 ms step: the pool and the
              step are nearly balanced, as on the H200 (28 batches/s each way);
  contention  a host-bound loop (10 ms of main-thread CPU a step) beside workers that want both
              cores, as the H200's 14 workers held 15.5 of 16 cores.

    python results/bench/gpu-analog/analog.py [rounds]
"""
import statistics
import sys

from autotune.bench.accuracy import parse_config
from autotune.search.options import BurstOptions
from autotune.burst.runner import run_burst
from autotune.space.cpus import usable_cpus
from autotune.verify.steady import measure_steady
from autotune.workload.device import resolve_device
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload

CASES = (("convoy", "sim:io_ms=30,step_ms=35,batch=16", "w14 pf2"),
         ("contention", "sim:cpu_ms=3,step_ms=5,host_ms=10,batch=16", "w2 pf2"))
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
settings, cpus = BurstOptions().settings(), usable_cpus().count
for name, spec, label in CASES:
    wl = load_workload(spec, WorkloadOptions(device="cpu"))
    cfg = parse_config(label)
    dev = wl.device or resolve_device("cpu")
    bursts, steady = [], []
    for r in range(rounds):
        b = run_burst(wl, cfg, dev, settings, usable_cpus=cpus)
        s = measure_steady(wl, cfg, dev, 10.0, settle_s=2.0)
        bursts.append(b.samples_per_s)
        steady.append(s.samples_per_s)
        print(f"{name} {label} round {r + 1}: burst {b.samples_per_s:.1f} (window {b.window_s:.2f} s,"
              f" {b.steps} steps) | steady {s.samples_per_s:.1f} | ratio"
              f" {b.samples_per_s / s.samples_per_s:.3f}", flush=True)
    print(f"{name} {spec} {label}: burst/steady medians"
          f" {statistics.median(bursts) / statistics.median(steady):.3f}", flush=True)
