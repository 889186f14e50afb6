"""Issue 48: a rank's rate depends on how its process started, with no autotune at all.
Plain torchrun, 2 gloo ranks, the job of benchmarks/torchrun_twice.py (tests/frameworks/
ddp_train.py's items and step, 2 epochs of 600 steps a rank) at one fixed configuration, two
variants alternated: `none`, the script as it is; `pause`, the same with a pause of PAUSE_S in
each rank after its imports, before init_process_group (about what the 8 steps at
num_workers=0 that start a first run under `autotune run` take). Each rank times its own steps;
rank 0's rate over each epoch (its first 50 steps left out) is printed. From the repository root:
python results/bench/repeated-runs/start_level.py [ROUNDS] \
    | tee results/bench/repeated-runs/start_level.out"""

import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from autotune.made_by import git_commit  # noqa: E402
from tests.script_runs import torchrun_command  # noqa: E402

CONFIG = dict(num_workers=3, prefetch_factor=4)
PAUSE_S = 0.144
RANK = """
import json, os, sys, time
sys.path.insert(0, {frameworks!r})
import torch, torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler
from ddp_train import STEP_S, Items
pause = float(os.environ["PAUSE_S"])
if pause:
    time.sleep(pause)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = Items(9600)
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, world, rank, seed=0),
                    **{config!r})
marks = []
for epoch in range(2):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        marks.append(time.perf_counter())
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        time.sleep(STEP_S)
if rank == 0:
    open(os.environ["MARKS"], "w").write(json.dumps(marks))
dist.destroy_process_group()
"""


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    print(
        f"# python results/bench/repeated-runs/start_level.py {rounds} --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}, load average at the start {os.getloadavg()[0]:.1f}; fixed {CONFIG},"
        f" pause {PAUSE_S} s",
        flush=True,
    )
    rates: dict[str, list[tuple[float, float, float]]] = {"none": [], "pause": []}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        script = tmp / "rank.py"
        frameworks = str(ROOT / "tests" / "frameworks")
        script.write_text(RANK.format(frameworks=frameworks, config=CONFIG))
        for r in range(rounds):
            for variant in ("none", "pause") if r % 2 == 0 else ("pause", "none"):
                marks_file = tmp / "marks.json"
                env = {
                    **os.environ,
                    "PAUSE_S": str(PAUSE_S if variant == "pause" else 0),
                    "MARKS": str(marks_file),
                }
                t0 = time.perf_counter()
                done = subprocess.run(
                    torchrun_command(script), capture_output=True, text=True, env=env, timeout=600
                )
                wall = time.perf_counter() - t0
                if done.returncode:
                    print(done.stderr[-2000:])
                    raise SystemExit(f"round {r + 1} {variant}: exit {done.returncode}")
                m = json.loads(marks_file.read_text())
                e1 = 8 * (599 - 50) / (m[599] - m[50])
                e2 = 8 * (len(m) - 1 - 650) / (m[-1] - m[650])
                rates[variant].append((wall, e1, e2))
                print(
                    f"round {r + 1} {variant}: wall {wall:.2f} s, epoch 1 {e1:.0f}, epoch 2"
                    f" {e2:.0f} samples/s",
                    flush=True,
                )
    for variant, v in rates.items():
        print(
            f"{variant}: medians wall {statistics.median(x[0] for x in v):.2f} s, epoch 1"
            f" {statistics.median(x[1] for x in v):.0f}, epoch 2"
            f" {statistics.median(x[2] for x in v):.0f} samples/s"
        )
    pairs = [p[1] / n[1] for p, n in zip(rates["pause"], rates["none"], strict=True)]
    pairs2 = [p[2] / n[2] for p, n in zip(rates["pause"], rates["none"], strict=True)]
    print(
        f"pause / none, each round: epoch 1 {', '.join(f'{x:.3f}' for x in pairs)};"
        f" epoch 2 {', '.join(f'{x:.3f}' for x in pairs2)}"
    )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
