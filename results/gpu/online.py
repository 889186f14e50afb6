"""Online tuning on a GPU: the demo (ResNet-50, 224 px, AMP) trained with the loop of
`autotune bench --online` (benchmarks.online_loop.train), three ways:

  (b) autotune.DataLoader, starting from PyTorch's defaults, `--steps` steps;
  (c) `--ideal` from step 0, `--steps` steps (default: the loader knobs of the best configuration
      of the 2026-11-22 independent grid on an H100; non_blocking and channels_last are the
      training loop's own, not the loader's, so all three ways copy as PyTorch's defaults do);
  (a) PyTorch's defaults for `--defaults-steps` steps only: at about half a second a step, 3,000
      of them would take the whole device lease.

(b) and (c) alternate their order by round. Before the first way, the step runs on one batch
until cuDNN's autotuning and CUDA's module loading are done, so no way pays that one-time cost.

    python3 results/gpu/online.py [--steps 3000] [--defaults-steps 200] [--rounds 1] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from benchmarks.accuracy import parse_config
from benchmarks.online_figures import StepTimes
from benchmarks.online_loop import train
from autotune.online.loader import DataLoader
from autotune.online.options import OnlineOptions
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.verify.steady import synchronize
from autotune.workload.options import WorkloadOptions
from autotune.workload.spec import load_workload


def warm_up(workload, device: torch.device, steps: int = 15) -> float:
    loader = workload.make_loader(PYTORCH_DEFAULTS)
    x, y = next(iter(loader))
    batch = (x.to(device), y.to(device))
    t0 = time.perf_counter()
    for _ in range(steps):
        workload.step(batch)
    synchronize(device)
    return time.perf_counter() - t0


def rate(times: StepTimes, batch: int, start: int = 0) -> float:
    return (times.steps - start) * batch / times.span(start, times.steps)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--spec", default="demo")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--defaults-steps", type=int, default=200)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--ideal", default="w16 pf2 pin")
    p.add_argument("--json", default=None)
    p.add_argument("--device", default="cuda")  # cpu: a smoke run where there is no GPU
    args = p.parse_args()
    workload = load_workload(args.spec, WorkloadOptions(device=args.device))
    device = workload.device or torch.device(args.device)
    batch = workload.batch_size
    ideal = parse_config(args.ideal)
    print(f"warm-up: {warm_up(workload, device):.1f}s", flush=True)
    out: dict = {"spec": args.spec, "ideal": ideal.label(), "steps": args.steps,
                 "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else None, "rounds": []}
    for r in range(args.rounds):
        ways = ("ideal", "online") if r % 2 == 0 else ("online", "ideal")
        got: dict = {}
        for way in ways:
            if way == "online":
                times, loader = train(workload, lambda: DataLoader(
                    **workload.loader_arguments(), online=OnlineOptions(results_dir=None, cuda=device.type == "cuda")),
                    device, PYTORCH_DEFAULTS.transfer_kwargs(), args.steps, "online")
                state = loader.tuner_state
                got["online"] = times
                got["state"] = state
                print(f"round {r + 1} (b) online: {rate(times, batch):.1f} samples/s over"
                      f" {args.steps} steps; chose {state.chosen and state.chosen.label()} after"
                      f" {state.exploration_ended_at} steps ({state.stop_reason}); exploration cost"
                      f" {state.exploration_cost_s:.1f}s; measured {json.dumps(state.measured)}",
                      flush=True)
            else:
                times, _ = train(workload, lambda: workload.make_loader(ideal), device,
                                 ideal.transfer_kwargs(), args.steps, "ideal")
                got["ideal"] = times
                print(f"round {r + 1} (c) {ideal.label()}: {rate(times, batch):.1f} samples/s",
                      flush=True)
        b, c, state = got["online"], got["ideal"], got["state"]
        k = state.exploration_ended_at
        n = args.steps
        whole = c.span(0, n) / b.span(0, n)
        after = None if k is None or k >= n else c.span(k, n) / b.span(k, n)
        print(f"round {r + 1}: (b)/(c) whole {whole:.3f}, after tuning"
              f" {'n/a' if after is None else f'{after:.3f}'} (k={k})", flush=True)
        out["rounds"].append({
            "order": list(ways), "online_samples_per_s": rate(b, batch),
            "ideal_samples_per_s": rate(c, batch), "whole": whole, "after": after,
            "exploration_ended_at": k, "chosen": state.chosen and state.chosen.label(),
            "stop_reason": state.stop_reason, "exploration_cost_s": state.exploration_cost_s,
            "measured": state.measured, "online_stamps": list(b.stamps)[:: max(1, n // 300)],
            "ideal_stamps": list(c.stamps)[:: max(1, n // 300)]})
    if args.defaults_steps:
        times, _ = train(workload, lambda: workload.make_loader(PYTORCH_DEFAULTS), device,
                         PYTORCH_DEFAULTS.transfer_kwargs(), args.defaults_steps, "defaults")
        out["defaults_samples_per_s"] = rate(times, batch)
        out["defaults_steps"] = args.defaults_steps
        print(f"(a) defaults: {rate(times, batch):.1f} samples/s over {args.defaults_steps} steps",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
