"""Why the online tuner read pin_memory as slower on the demo (ResNet-50, 224 px, AMP) while an
independent loop read it 14% faster: autotune.DataLoader driven by a fixed schedule that alternates
`w14 pf2 persist` and `w14 pf2 pin persist` every `--every` steps, each step recorded as the
online tuner sees it. Per segment: the steady rate (steps after the switch's start-up and buffered
batches), the mean of its 8-step window rates (autotune.online.measurement.window_rate), and the
mean wait and backlog.

    python3 results/gpu/pin_diag.py [--every 120] [--segments 8] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

from benchmarks.accuracy import parse_config
from benchmarks.online_loop import train
from autotune.online.loader import DataLoader
from autotune.online.measurement import window_rate
from autotune.online.options import OnlineOptions
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload
from online import warm_up  # results/gpu/online.py


class Alternate:
    def __init__(self, configs, every: int):
        self.configs, self.every = configs, every
        self.current, self.exploring = configs[0], True
        self.steps: list = []

    def observe(self, step):
        self.steps.append((self.current, step))
        if len(self.steps) % self.every:
            return None
        self.current = self.configs[(len(self.steps) // self.every) % len(self.configs)]
        return self.current

    def epoch_ended(self):
        return None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--every", type=int, default=120)
    p.add_argument("--segments", type=int, default=8)
    p.add_argument("--json", default=None)
    p.add_argument("--spec", default="demo")
    p.add_argument("--device", default="cuda")  # cpu: a smoke run where there is no GPU
    a = p.parse_args()
    workload = load_workload(a.spec, WorkloadOptions(device=a.device))
    device = workload.device or torch.device(a.device)
    print(f"warm-up: {warm_up(workload, device):.1f}s", flush=True)
    configs = (parse_config("w14 pf2 persist"), parse_config("w14 pf2 pin persist"))
    policy = Alternate(configs, a.every)

    def make():
        loader = DataLoader(**workload.loader_arguments(),
                            online=OnlineOptions(results_dir=None, cuda=device.type == "cuda"))
        loader.tune_with(policy)
        return loader

    train(workload, make, device, PYTORCH_DEFAULTS.transfer_kwargs(), a.every * a.segments, "pin diag")
    rows = []
    for seg in range(a.segments):
        part = policy.steps[seg * a.every:(seg + 1) * a.every]
        config = part[0][0]
        steady = [s for _, s in part[1 + config.prefetch_depth:] if s.step_s is not None]
        windows = [window_rate(steady[i:i + 8]) for i in range(0, len(steady) - 7, 8)]
        batch = workload.batch_size
        row = {"segment": seg, "config": config.label(),
               "steady_samples_per_s": batch * len(steady) / sum(s.step_s for s in steady),
               "window_mean_samples_per_s": batch * statistics.fmean(windows),
               "window_min_max": [batch * min(windows), batch * max(windows)],
               "wait_pct": 100 * sum(s.wait_s for s in steady) / sum(s.step_s for s in steady),
               "backlog_mean": statistics.fmean(s.backlog for s in steady if s.backlog is not None),
               "startup_s": part[0][1].startup_s}
        rows.append(row)
        print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()}),
              flush=True)
    for config in configs:
        mine = [r for r in rows if r["config"] == config.label()]
        print(f"{config.label()}: steady {statistics.fmean(r['steady_samples_per_s'] for r in mine):.1f},"
              f" windows {statistics.fmean(r['window_mean_samples_per_s'] for r in mine):.1f} samples/s")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
