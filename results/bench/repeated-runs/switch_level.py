"""Issue 48: does a pool started mid-run read faster than the run's first pool, with no autotune?

Run 2 of the 2-rank job checks its remembered best on a pool started at step 0, and that check
reads 10-20% below run 1's windows of the same configuration, whose pool a switch started
mid-run; within run 2, the next candidate (a switch's pool) reads 7-15% above the check
(notes.md, `check_windows.out`). This asks the same of plain torchrun: 2 gloo ranks, the job of
benchmarks/torchrun_twice.py (tests/frameworks/ddp_train.py's items and step, 2 epochs of 600
steps a rank), one fixed configuration, two variants alternated:
  - `one`: one loader for the whole run, as a fixed run (and run 2's check) has it;
  - `switch`: at step SWITCH_AT of epoch 1, the loader is shut down and a fresh one of the same
    configuration serves the epoch's remaining batches and epoch 2, as a switch of the climb does.
Rank 0 times its steps and reads the loader's backlog after each hand-out, as the online meter
does (autotune/burst/backlog.py). Printed: its delivered rate (batches over time) over steps
40-SWITCH_AT (before), SWITCH_AT+32 to SWITCH_AT+265 (after: the climb's warm-up and about its
check's span) and epoch 2 (its first 50 steps left out); and the same spans cut into windows of
WINDOW steps read as the online climb reads a window (online/measurement.py `window_rate`: the
lower of production, backlog change included, and the step's capacity), their median. From the
repository root:
python results/bench/repeated-runs/switch_level.py [ROUNDS] \
    | tee results/bench/repeated-runs/switch_level.out"""

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
from autotune.burst.window import next_mark, span_rate  # noqa: E402
from autotune.made_by import git_commit  # noqa: E402
from tests.script_runs import torchrun_command  # noqa: E402

CONFIG = dict(num_workers=3, prefetch_factor=8, persistent_workers=True)
SWITCH_AT = 265
AFTER = (SWITCH_AT + 32, SWITCH_AT + 265)
WINDOW = 23  # steps: about the climb's window on this job (0.1 s at about 8 ms a step)
RANK = """
import json, os, sys, time
sys.path[:0] = [{frameworks!r}, {root!r}]
from autotune.burst.backlog import ready_batches
import torch, torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler
from ddp_train import STEP_S, Items
switch = os.environ["VARIANT"] == "switch"
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = Items(9600)
sampler = DistributedSampler(data, world, rank, seed=0)


class Batches:
    # The epoch's batches, set from outside: a persistent pool reads them at each epoch's start.
    batches = []

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def batches_of(epoch):
    sampler.set_epoch(epoch)
    idx = list(sampler)
    return [idx[i:i + 8] for i in range(0, len(idx), 8)]


def loader_for(batches):
    sampler_ = Batches()
    sampler_.batches = batches
    return DataLoader(data, batch_sampler=sampler_, **{config!r}), sampler_


def step(x, y):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    time.sleep(STEP_S)


marks = []  # per step: (handed out at, waited inside next(), backlog just after)
epoch0 = batches_of(0)
loader, batches = loader_for(epoch0)
it = iter(loader)
for i in range(len(epoch0)):
    if switch and i == {switch_at}:
        it._shutdown_workers()
        del it, loader
        loader, batches = loader_for(epoch0[i:])
        it = iter(loader)
    t0 = time.perf_counter()
    x, y = next(it)
    t1 = time.perf_counter()
    marks.append((t1, t1 - t0, ready_batches(it)))
    step(x, y)
batches.batches = batches_of(1)
it = iter(loader)
for i in range(len(batches)):
    t0 = time.perf_counter()
    x, y = next(it)
    t1 = time.perf_counter()
    marks.append((t1, t1 - t0, ready_batches(it)))
    step(x, y)
if rank == 0:
    open(os.environ["MARKS"], "w").write(json.dumps(marks))
dist.destroy_process_group()
"""


def rate(m: list[list[float]], lo: int, hi: int) -> float:
    """Samples/s delivered from hand-out lo to hand-out hi."""
    return 8 * (hi - lo) / (m[hi][0] - m[lo][0])


def window_read(m: list[list[float]], lo: int, hi: int) -> float:
    """Samples/s as the online climb reads a window of these steps (`window_rate`)."""
    marks: list = []
    waited = 0.0
    for i in range(lo, hi):
        if i > lo:
            waited += m[i][1]
        marks.append(next_mark(marks, m[i][0] - m[lo][0], i - lo, m[i][2], waited))
    return 8 * span_rate(marks, 0, len(marks) - 1)


def windows(m: list[list[float]], lo: int, hi: int) -> float:
    """The median of the climb's reading of WINDOW-step windows from lo to hi."""
    return statistics.median(
        window_read(m, a, a + WINDOW) for a in range(lo, hi - WINDOW + 1, WINDOW)
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    print(
        f"# python results/bench/repeated-runs/switch_level.py {rounds} --"
        f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}, load average at the start {os.getloadavg()[0]:.1f}; fixed {CONFIG},"
        f" switch at step {SWITCH_AT}",
        flush=True,
    )
    rates: dict[str, list[tuple[float, ...]]] = {"one": [], "switch": []}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        script = tmp / "rank.py"
        frameworks = str(ROOT / "tests" / "frameworks")
        script.write_text(
            RANK.format(frameworks=frameworks, root=str(ROOT), config=CONFIG, switch_at=SWITCH_AT)
        )
        for r in range(rounds):
            for variant in ("one", "switch") if r % 2 == 0 else ("switch", "one"):
                marks_file = tmp / "marks.json"
                env = {**os.environ, "VARIANT": variant, "MARKS": str(marks_file)}
                t0 = time.perf_counter()
                done = subprocess.run(
                    torchrun_command(script), capture_output=True, text=True, env=env, timeout=600
                )
                wall = time.perf_counter() - t0
                if done.returncode:
                    print(done.stderr[-2000:])
                    raise SystemExit(f"round {r + 1} {variant}: exit {done.returncode}")
                m = json.loads(marks_file.read_text())
                spans = ((40, SWITCH_AT), AFTER, (650, len(m) - 1))
                row = (
                    wall,
                    *(rate(m, *span) for span in spans),
                    *(windows(m, *span) for span in spans),
                )
                rates[variant].append(row)
                print(
                    f"round {r + 1} {variant}: wall {wall:.2f} s; delivered, windows read"
                    f" (samples/s): steps 40-{SWITCH_AT} {row[1]:.0f}, {row[4]:.0f}; steps"
                    f" {AFTER[0]}-{AFTER[1]} {row[2]:.0f}, {row[5]:.0f}; epoch 2 {row[3]:.0f},"
                    f" {row[6]:.0f}",
                    flush=True,
                )
    for variant, v in rates.items():
        med = [statistics.median(x[k] for x in v) for k in range(7)]
        print(
            f"{variant}: medians wall {med[0]:.2f} s; delivered: before {med[1]:.0f}, after"
            f" {med[2]:.0f}, epoch 2 {med[3]:.0f}; windows read: before {med[4]:.0f}, after"
            f" {med[5]:.0f}, epoch 2 {med[6]:.0f} samples/s; after / before, delivered"
            f" {statistics.median(x[2] / x[1] for x in v):.3f}, windows read"
            f" {statistics.median(x[5] / x[4] for x in v):.3f}"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
