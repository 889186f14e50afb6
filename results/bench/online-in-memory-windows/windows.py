"""Is in-memory's online miss the windows' noise? The online bench on in-memory, 3 rounds, with
(b)'s windows lengthened (window_s) or more of them allowed before a tie (max_windows), everything
else as `autotune bench --online` runs it. The default policy's figures are in
results/bench/online-unseen and online-subset-3rounds (whole 0.893-0.915 on the worst rounds).

Run: python results/bench/online-in-memory-windows/windows.py VARIANT [TAG]
(VARIANT: window_s=0.3, max_windows=12, or window_s=0.1 for the default policy as a control).
Writes online.md/.json into a folder of this one named after the variant (and TAG, for a repeat)."""

from __future__ import annotations

import sys
from pathlib import Path

from autotune.bench import online_run
from autotune.bench.online_run import run_online
from autotune.bench.options import OnlineBenchOptions
from autotune.bench.write import write_online

key, _, value = sys.argv[1].partition("=")
default = online_run.online_options


def with_variant(*args, **kwargs):
    options = default(*args, **kwargs)
    return options.model_copy(update={key: type(getattr(options, key))(value)})


online_run.online_options = with_variant
out = Path(__file__).parent / "-".join([sys.argv[1].replace("=", "-"), *sys.argv[2:3]])
opts = OnlineBenchOptions(workloads=["in-memory"], rounds=3, defaults=False, run_grid=False, out_dir=out)
command = f"python {Path(__file__).relative_to(Path.cwd())} {' '.join(sys.argv[1:])}"
report = run_online(opts, print, command)
print(write_online(report, out, "online"))
