"""The bench's workloads: each puts the best configuration somewhere else.

On a machine with C usable CPUs (and a step that leaves the CPU free, like a GPU kernel):
  cpu-heavy         items burn CPU: the best is about one worker per free core, no more;
  storage           items wait on storage latency: the best is well above the core count;
  slow-accelerator  the step is slow: any worker keeps up, so the best is the cheapest (1 worker);
  large-items       768 KiB items: moving batches between processes is the cost that matters;
  demo              the real JPEG decode + augment pipeline training a small CNN on the CPU;
  photos            a second real JPEG pipeline, unlike the demo: camera-size sources (1024-1600
                    px), resize + random crop to 128 px + flip + colour jitter, batches of 24 and
                    (without a GPU) a 30 ms emulated accelerator step that leaves the CPUs to the
                    decode-heavy loader;
  in-memory         a TensorDataset of 32 features per item in batches of 256 beside a 2 ms step
                    (pytorch#106704): fetching a batch costs the training process about what
                    receiving it from a worker does, so num_workers=0 is the best;
  held-out          mid-sized batches (40 of 3x40x40) with CPU and storage cost per item, a
                    little main-thread work per step and epochs of 150 steps: worker counts,
                    prefetch and epoch restarts all matter; not run while the tuner was developed.

Each full run holds one workload out; once run, it is seen, and a fresh one replaces it. The seen
ones stay available with `--workloads` (off by default, to keep the full run's time down):
  mixed             CPU and storage cost mixed (held out in the first full run);
  cpu-storage-slow  CPU work with a little storage latency and a slow step (held out in the
                    second);
  big-batches       large batches of mid-sized items, CPU and storage latency alike (held out in
                    the third: it showed the host-CPU-ceiling stop rule, since removed, stopping
                    short of the best);
  mid-images        mid-sized image items, a little storage latency, a moderate step (held out in
                    the fourth);
  host-work         a little main-thread work per step beside CPU and storage cost per item (held
                    out in the fifth);
  small-items       small items in large batches (96 of 3x32x32) with a little CPU and storage
                    latency each, a fast step with main-thread work (held out in the sixth).

Issue #25 added five, of kinds the tuner had not been tried on: heavy-tail (one item in 40
waits 60 ms), large-numpy (300 KiB numpy items), tiny-epochs (30-step epochs, 0.4 s worker
open), collate-heavy (the work in the collate_fn; held out) and tokenizer (pure-Python
tokenizing with a padding collate).

Issue #25 also added short-run, for `bench --online` only: a 160-step training (the shape of
PyTorch's Data Loading Optimization tutorial) whose length the tuner is told, judged against the
fastest hand-set configuration over the same 160 steps.

Issue #12 added two, for what a burst alone cannot see:
  short-epochs      each worker pays 2 s to open its files on first use and an epoch is 300 steps:
                    without persistent_workers every epoch pays the start-up again;
  deep-storage      items wait 8 ms on storage and one in 40 straggles (20x), a 22 ms step: the rate
                    still rises at 12-14 workers on 2 CPUs (steady windows: 8 workers 518, 12 657,
                    14 679 samples/s; the step takes 727), above the 4 x CPUs the range starts
                    at; its grid reaches 20 workers.

Issue #45 added three where an expensive per-worker open, short epochs and more workers all
pay at once, in different proportions, so that the tuner cannot be lucky on them: the worker
count and persistent_workers must be judged together (a count measured without persistent
workers pays its opens every epoch, and reads slower than it is with them):
  open-30           0.4 s to open a worker's files, 30-step epochs, items that wait on storage
                    far longer than they compute: the restart outweighs the epoch's steady time,
                    and the best is many persistent workers;
  open-80           1 s open, 80-step epochs, CPU and storage time per item: the restart is about
                    an epoch's steady time; held out: never run while developing;
  open-300          2 s open, 300-step epochs, storage-bound items: the restart is a third of an
                    epoch, and storage latency asks for more workers than the cores.

Grids: on the simulated workloads (and on `photos` without a GPU) the step never reads the
batch's memory layout, so channels_last only adds a copy in the main process; the grid holds it
off (66 points instead of 130 on 2 CPUs; the tuner still searches it). `demo` and `photos` hold
persistent_workers off: their epochs are far longer than any burst. `--full-grid` measures every
valid point.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.errors import OptionsError


@dataclass(frozen=True)
class BenchWorkload:
    key: str
    spec: str  # as `autotune tune` takes it
    what: str  # where its best lies, and why
    held_out: bool = False
    compute_bound: bool = False  # the step is the bottleneck: the tuner must stay cheap
    quick: bool = False  # part of `autotune bench --quick`
    default: bool = True  # part of the full run (the others only when named with --workloads)
    # Boolean knobs the grid holds off (the tuner still searches them), where the full grid
    # would cost too much for what it could show. persistent_workers only acts at an epoch
    # boundary, and the demo's epoch (800 batches) is far longer than any burst: measuring it on
    # would repeat each point. channels_last, where the step never reads the layout, only adds a
    # copy. `--full-grid` ignores these.
    grid_off: tuple[str, ...] = ()
    grid_off_on_cpu: tuple[str, ...] = ()  # held off as well where the device is the CPU
    # Worker counts the grid measures where the tuner's starting range (4 x CPUs) is not enough
    # (or too many to measure each); empty: every count of that range.
    grid_workers: tuple[int, ...] = ()
    # A short run (`bench --online` only): the training's whole length, told to the tuner as a
    # script that knows its epochs tells it; its ideal is the best hand-set configuration over
    # that run (online_short.py).
    online_steps: int | None = None

    def held_off(self, device_type: str) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(self.grid_off + (self.grid_off_on_cpu if device_type == "cpu" else ()))
        )


# On these the step ignores the memory layout: channels_last is a pure cost, held off the grid.
LAYOUT_BLIND = ("channels_last",)
# Issue #45's workloads: their best lies past the 8 workers the range starts at on 2 CPUs.
JOINT_GRID = (0, 1, 2, 4, 6, 8, 10, 12, 16)

BENCH_WORKLOADS = (
    BenchWorkload(
        "cpu-heavy",
        "sim:cpu_ms=4,step_ms=10,batch=16",
        "4 ms of CPU per item: loading is CPU-bound",
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "storage",
        "sim:cpu_ms=0.2,io_ms=5,step_ms=20,batch=16",
        "5 ms storage latency per item: workers wait, more than the cores pay off",
        quick=True,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "slow-accelerator",
        "sim:cpu_ms=1,step_ms=80,batch=16",
        "80 ms step: one worker keeps up",
        compute_bound=True,
        quick=True,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "large-items",
        "sim:cpu_ms=0.5,step_ms=10,batch=16,shape=3x256x256",
        "768 KiB items: inter-process copies dominate",
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "demo",
        "demo",
        "JPEG decode and augmentation, a small CNN trained on the CPU",
        grid_off=("persistent_workers",),
    ),
    BenchWorkload(
        "photos",
        "photos",
        "camera-size JPEGs, resize + random crop + flip + colour jitter, batches of 24,"
        " a 30 ms emulated accelerator step (CPU) or resnet18 (CUDA): decode-bound",
        grid_off=("persistent_workers",),
        grid_off_on_cpu=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "in-memory",
        "mem:step_ms=2,batch=256,shape=32,length=262144",
        "a TensorDataset in RAM, 32 features per item, batches of 256, a 2 ms step: a"
        " worker's hand-over of a batch costs what fetching it does, num_workers=0 wins",
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "held-out",
        "sim:cpu_ms=0.7,io_ms=2,step_ms=16,host_ms=1,batch=40,shape=3x40x40,length=6000",
        "batches of 40 mid-sized items with CPU and storage cost each, 1 ms of main-thread"
        " work per step, 150-step epochs; never run while developing",
        held_out=True,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "short-epochs",
        "sim:cpu_ms=0.3,io_ms=1,step_ms=8,batch=16,length=4800,open_ms=2000",
        "2 s of worker start-up (opening files) and 300-step epochs: persistent workers"
        " save the start-up every epoch",
        grid_off=LAYOUT_BLIND,
    ),
    # Epochs of 6,250 steps (100 s): persistence cannot matter, and is held off the grid.
    BenchWorkload(
        "deep-storage",
        "sim:cpu_ms=0.1,io_ms=8,step_ms=22,batch=16,length=100000,straggle_every=40,straggle_x=20",
        "8 ms storage latency, one item in 40 straggling 20x: the best is 12 or more workers"
        " on 2 CPUs, above the range the search starts with",
        grid_off=("persistent_workers", *LAYOUT_BLIND),
        grid_workers=(0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 20),
    ),
    # Issue #25's kinds, unseen by the tuner's developers: each puts its best where a lucky burst
    # or a CPU-share rule would miss it.
    BenchWorkload(
        "heavy-tail",
        "sim:cpu_ms=0.3,io_ms=1.5,step_ms=10,batch=16,length=100000,"
        "straggle_every=40,straggle_x=40",
        "1.5 ms reads, one item in 40 waiting 60 ms: convoys of slow batches, and more"
        " workers keep paying while the CPUs read busy",
        grid_off=("persistent_workers", *LAYOUT_BLIND),
        grid_workers=(0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 20),
    ),
    BenchWorkload(
        "large-numpy",
        "sim:cpu_ms=0.3,step_ms=20,batch=32,shape=3x160x160,numpy=1",
        "300 KiB float32 numpy items, 9.4 MiB batches through shared memory: noisy"
        " hand-overs decide",
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "tiny-epochs",
        "sim:cpu_ms=0.5,io_ms=1,step_ms=8,batch=16,length=480,open_ms=400",
        "30-step epochs and 0.4 s to open a worker's files: restarts, refill and prefetch"
        " depth decide",
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "collate-heavy",
        "sim:cpu_ms=0.1,step_ms=15,batch=32,collate_ms=12",
        "12 ms of collate_fn work per batch against 3 ms of items: the work sits in the"
        " collate; held out: never run while developing",
        held_out=True,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "tokenizer",
        "text:words=120,batch=32,step_ms=10",
        "pure-Python tokenizing of generated sentences, padded to the batch's longest:"
        " GIL-bound work that only workers run in parallel",
    ),
    # Issue #25's short run: the shape of PyTorch's "Data Loading Optimization" tutorial (512
    # items of 5 ms, batches of 32, 10 epochs: 160 steps), a 40 ms step.
    BenchWorkload(
        "short-run",
        "sim:cpu_ms=0,io_ms=5,step_ms=40,batch=32,length=512",
        "a 160-step training (10 epochs of 16 batches of 5 ms items, a 40 ms step) whose"
        " length the tuner is told: exploring must pay for itself within the run",
        online_steps=160,
    ),
    # Issue #45: a per-worker open, short epochs and more workers paying at once. Their grids
    # reach past the 8 workers the range starts at on 2 CPUs; persistence stays on the grid.
    BenchWorkload(
        "open-30",
        "sim:cpu_ms=0.6,io_ms=4,step_ms=6,batch=16,length=480,open_ms=400",
        "0.4 s worker open, 30-step epochs, 4 ms storage waits per item: the restart outweighs"
        " an epoch's steady time, and more persistent workers pay",
        grid_off=LAYOUT_BLIND,
        grid_workers=JOINT_GRID,
    ),
    BenchWorkload(
        "open-80",
        "sim:cpu_ms=0.8,io_ms=3,step_ms=10,batch=16,length=1280,open_ms=1000",
        "1 s worker open, 80-step epochs, CPU and storage time per item: workers and"
        " persistence judged together; held out: never run while developing",
        held_out=True,
        grid_off=LAYOUT_BLIND,
        grid_workers=JOINT_GRID,
    ),
    BenchWorkload(
        "open-300",
        "sim:cpu_ms=0.2,io_ms=6,step_ms=12,batch=16,length=4800,open_ms=2000",
        "2 s worker open, 300-step epochs, storage-bound items: a third of an epoch restarts"
        " a fresh pool, and the items ask for more workers than the cores",
        grid_off=LAYOUT_BLIND,
        grid_workers=JOINT_GRID,
    ),
    BenchWorkload(
        "mixed",
        "sim:cpu_ms=1.5,io_ms=3,step_ms=25,batch=32",
        "CPU and storage cost mixed; held out in the first full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "cpu-storage-slow",
        "sim:cpu_ms=2.5,io_ms=1,step_ms=40,batch=16",
        "CPU work, a little storage latency, a slow step; held out in the second full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "big-batches",
        "sim:cpu_ms=0.8,io_ms=2,step_ms=15,batch=64,shape=3x64x64",
        "large batches of mid-sized items, CPU and storage latency alike; held out in"
        " the third full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "mid-images",
        "sim:cpu_ms=1.2,io_ms=0.5,step_ms=30,batch=32,shape=3x128x128",
        "mid-sized image items, a little storage latency, a moderate step; held out in"
        " the fourth full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "host-work",
        "sim:cpu_ms=2,io_ms=1.5,step_ms=25,host_ms=4,batch=24,shape=3x48x48",
        "CPU and storage cost per item beside 4 ms of main-thread work per step; held out"
        " in the fifth full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
    BenchWorkload(
        "small-items",
        "sim:cpu_ms=0.15,io_ms=0.4,step_ms=12,host_ms=2,batch=96,shape=3x32x32",
        "small items in large batches, a little CPU and storage latency each, a fast step"
        " with 2 ms of main-thread work; held out in the sixth full run",
        default=False,
        grid_off=LAYOUT_BLIND,
    ),
)


def check_keys(keys: list[str]) -> list[str]:
    known = [w.key for w in BENCH_WORKLOADS]
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise OptionsError(
            f"unknown bench workload {', '.join(unknown)}; choose from {', '.join(known)}"
        )
    return keys


def select(keys: list[str] | None, quick: bool, online: bool = False) -> list[BenchWorkload]:
    """The workloads named, else the default (or quick) set; short runs only online."""
    if keys:
        check_keys(keys)
        return [w for k in keys for w in BENCH_WORKLOADS if w.key == k]
    return [
        w
        for w in BENCH_WORKLOADS
        if (w.quick if quick else w.default) and (online or w.online_steps is None)
    ]
