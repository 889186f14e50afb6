"""Do the whole-run misses of deep-storage and heavy-tail come from exploring against an epoch
longer than the run? The online bench on WORKLOAD, 3 rounds, exactly as `autotune bench --online
--no-defaults --no-grid` runs it, except that (b) is told the training's length (total_steps = the
bench's 3000 steps), as a script passing `online={"total_steps": ...}` or a framework's max_steps
would. Untold, their epochs of 6250 steps size the exploration bound (results/bench/
online-deep-storage, online-unseen).

Run: python results/bench/online-told-length/told.py WORKLOAD
Writes online.md/.json into a folder of this one named after the workload."""

from __future__ import annotations

import sys
from pathlib import Path

from autotune.bench import online_run
from autotune.bench.online_run import run_online
from autotune.bench.options import OnlineBenchOptions
from autotune.bench.write import write_online

untold = online_run.online_options


def told(opts, device, total_steps=None):
    return untold(opts, device, total_steps or opts.steps)


online_run.online_options = told
key = sys.argv[1]
out = Path(__file__).parent / key
opts = OnlineBenchOptions(workloads=[key], rounds=3, defaults=False, run_grid=False, out_dir=out)
report = run_online(opts, print, f"python {Path(__file__).relative_to(Path.cwd())} {key}")
print(write_online(report, out, "online"))
