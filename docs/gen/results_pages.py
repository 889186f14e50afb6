"""The Benchmarks pages, written from the committed results files by docs/gen/pages.py: every
table is rendered by the bench's own renderer from its JSON, and carries its file's stamp (date,
commit, machine, command). No figure on these pages is typed by hand."""

from __future__ import annotations

import statistics
from typing import Any

from online_summary import summary
from sources import ROOT, Source, all_results, read

from autotune.space.config import LoaderConfig
from benchmarks.cells import notes_lines
from benchmarks.model import AccuracyReport, BenchReport
from benchmarks.online_model import OnlineReport
from benchmarks.render import accuracy_table, bench_targets, headline
from benchmarks.render_online import online_table, online_targets

BENCH = "results/bench/bench.json"
UNSEEN = "results/bench/unseen/bench.json"  # issue 25's workloads, a run of their own
# Runs of a few workloads after the full one: a fix's effect, and a miss re-run to find its cause.
OFFLINE_RERUNS = (
    "results/bench/hand-over/bench.json",
    "results/bench/tokenizer-drift/bench.json",
    "results/bench/epoch-window/bench.json",
    "results/bench/deep-storage-rerun/bench.json",
    # f591466's side-by-side run (the short-epoch seeds at prefetch 1), its new code's side.
    "results/bench/prefetch-short-epochs/offline/new/open-30/bench.json",
    "results/bench/prefetch-short-epochs/offline/new/tiny-epochs/bench.json",
    # The tie rule's first offline run (results/bench/offline-tie/notes.md), on 811d7d8.
    "results/bench/offline-tie/bench.json",
)
ONLINE = (
    "results/bench/online.json",
    "results/bench/online-ranks2.json",
    "results/bench/online-ranks2-misses/online-ranks2.json",
    "results/bench/short-run/online.json",
    "results/bench/online-window-s/online.json",
    "results/bench/online-subset-3rounds/online.json",
    "results/bench/online-unseen/online.json",
    "results/bench/online-defaults/online.json",
    "results/bench/online-rest/online.json",
    "results/bench/online-deep-storage/online.json",
    "results/bench/online-photos/online.json",
    "results/bench/online-confirm/first-cut/online.json",
    "results/bench/online-confirm/misses/online.json",
    "results/bench/online-confirm/noisy/online.json",
    "results/bench/online-confirm/rest/online.json",
    "results/bench/online-start/online.json",
    "results/bench/online-start-rest/online.json",
    "results/bench/online-photos-start/online.json",
    "results/bench/online-whole-epochs/online.json",
    "results/bench/online-final/online.json",
    "results/bench/online-final-demo/online.json",
    "results/bench/online-final-rest/online.json",
)


def _under(folder: str, pattern: str) -> list[str]:
    """The files under `folder` that match `pattern`, as repository paths, in order."""
    return sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / folder).glob(pattern))


# Issue 45's side-by-side runs, a workload at a time: the after code's, and the runs of the
# policies that were kept (the runs of policies reverted, and the before codes', are left out).
# They feed the newest figures; their sections are in results/bench/online-45/notes.md.
ONLINE_45 = (
    *_under("results/bench/online-45", "after-*/online.json"),
    # The final code's run, a workload at a time (final/run.sh).
    *_under("results/bench/online-45/final", "*/online.json"),
    # db2b15a's side-by-side run, its new code's side (ab-db2b15a/run.sh).
    *_under("results/bench/online-45/ab-db2b15a", "new/*/online.json"),
    # ea4b35d's side-by-side run, its new code's side (ab-ea4b35d/run.sh).
    *_under("results/bench/online-45/ab-ea4b35d", "new/*/online.json"),
    # ab5bd00's side-by-side run (a short epoch's jump at prefetch 1), its new code's side.
    *_under("results/bench/prefetch-short-epochs", "new/*/online.json"),
    # 7eeb293's run, a workload at a time (online-final-7eeb293/run.sh), and dbe3038's
    # side-by-side run on short-run, its new code's side (ab-start-ram/run.sh).
    *_under("results/bench/online-final-7eeb293", "*/online.json"),
    *_under("results/bench/online-final-7eeb293/ab-start-ram", "new-*/online.json"),
    # 2120bb2's (the prefetch depth taken in place) on the two workloads it was compared on.
    *_under("results/bench/online-redepth", "new-*/online.json"),
    "results/bench/online-45/ram-fix/after-in-memory/online.json",
    "results/bench/online-45/ram-fix/after-large-items/online.json",
    "results/bench/online-45/stall-03/after-heavy-tail-1/online.json",
    "results/bench/online-45/stall-03/after-heavy-tail-2/online.json",
    "results/bench/online-45/stall-03/after-in-memory-1/online.json",
    "results/bench/online-45/stall-03/after-in-memory-2/online.json",
    "results/bench/online-45/warm/after-heavy-tail-1/online.json",
    "results/bench/online-45/warm/after-in-memory-1/online.json",
    "results/bench/online-45/warm/after-in-memory-2/online.json",
)
ACCURACY = (
    "results/bench/accuracy.json",
    "results/bench/accuracy-images/accuracy.json",
    "results/bench/accuracy-epochs/before/accuracy.json",
    "results/bench/accuracy-epochs/after/accuracy.json",
    "results/bench/accuracy-in-memory/accuracy.json",
    "results/bench/accuracy-tokenizer-persist/accuracy.json",
)
OVERHEAD = "results/bench/overhead.json"
TUTORIAL_CHECK = "results/bench/tutorial-short/tutorial_check.out"
REPEATED_RUNS = "results/bench/repeated-runs/repeated_runs.out"
TORCHRUN_TWICE = "results/bench/repeated-runs/torchrun_twice.out"
TORCHRUN_COST = "results/bench/repeated-runs/torchrun_cost.out"
JOB_COST = "results/bench/repeated-runs/job_cost.out"
JOB_COST_LONG = "results/bench/repeated-runs/job_cost-1200steps.out"
START_COST = "results/bench/repeated-runs/start_cost.out"
CLIMB_SIM = "results/bench/climb-sim/table.out"
# The climb from a script's own configuration with workers (climb_sim.py --start), on the code
# that predicts from the start's pool (d1ce454) and on the code before it; and the same on the
# machine, side by side (online-pool-start/run.sh).
CLIMB_SIM_STARTS = ("w2-pf2", "w4-pf2", "w8-pf2")
POOL_START = "results/bench/online-pool-start/table.out"
# A start with workers over short epochs, its workers' scaling read from steady steps (79b6098),
# against the code before it, on the machine (online-epoch-steady/run.sh).
EPOCH_STEADY = "results/bench/online-epoch-steady/table.out"
# Its workers' CPU read at a short epoch's last batch, before torch shuts the pool down (ae12523).
LAST_BATCH_CPU = "results/bench/online-last-batch-cpu/table.out"
# A run of unknown length that outlives its horizon resumes an exploring its bound stopped
# before the first candidate: simulated at three lengths, and on the machine.
RESUME_SIM = "results/bench/online-resume/sim_table.out"
RESUME_MACHINE = "results/bench/online-resume/machine/table.out"
# A running pool made persistent in place where exploring chooses persistence (943994b).
KEEP_POOL = "results/bench/online-keep-pool/machine/table.out"
HAND_OVER = "results/bench/online-hand-over/machine/table.out"
SPAWN_WORKERS = "results/bench/repeated-runs/spawn_workers.out"
HUNG_CANDIDATE = "results/bench/failures/hung_candidate.out"
RAM_WINDOW = "results/bench/repeated-runs/ram_window.out"
PREFETCH_DEPTH = "results/bench/prefetch-short-epochs/prefetch_depth.out"
GPU_RECIPE = "recipes/example-demo-h100.json"
GPU_ONLINE = "results/gpu/raw/2026-11-23/call5-online-demo.json"
# The GPU sessions of 2026-11-26: the recorded figure against plain loops, on the final code.
H200 = "results/gpu/raw/2026-11-26/"
H100 = "results/gpu/raw/2026-11-26-h100/"
# The H100's bursts against steady windows, four burst settings (results/gpu/session11.sh).
H100_ACCURACY = (
    "accuracy-trials.json",
    "accuracy-record.json",
    "accuracy-long.json",
    "accuracy-late.json",
)
# The evening's H200 calls (session14/15.sh): w16 and w8, then w8 under three burst settings. Its
# verify was cut by the call's time limit and left no JSON (the write-up quotes its log).
H200_EVENING = "results/gpu/raw/2026-11-26-h200-evening/"
H200_EVENING_ACCURACY = (
    "accuracy.json",
    "accuracy-trial.json",
    "accuracy-long.json",
    "accuracy-late.json",
)
# 2026-11-27 on an H100 (session16.sh): bursts against windows with the order alternating.
H100_ALTERNATING = "results/gpu/raw/2026-11-27-h100/"


def _load(rel: str) -> tuple[Source, Any]:
    return read(ROOT / rel)


def _stamped(source: Source, body: str) -> list[str]:
    lines = [source.stamp(), ""]
    if source.historical:
        lines += ['!!! note "Historical record"', f"    {source.historical}", ""]
    return lines + [body, ""]


def _sections(files: tuple[str, ...], model, table, targets) -> list[str]:
    """One section per results file: its command, its stamp, its table and its targets."""
    lines: list[str] = []
    for rel in files:
        if not (ROOT / rel).exists():  # a run not committed yet
            continue
        source, data = _load(rel)
        report = model.model_validate(data)
        lines += [
            f"## `{report.command}`",
            "",
            *_stamped(source, table(report)),
            targets(report),
            "",
            *notes_lines(report),
        ]
    return lines


def offline_table() -> tuple[Source, str]:
    source, data = _load(BENCH)
    return source, headline(BenchReport.model_validate(data))


def offline_page() -> str:
    source, table = offline_table()
    report = BenchReport.model_validate(_load(BENCH)[1])
    quick, _ = _load("results/bench/bench-quick.json")
    unseen: list[str] = []
    if (ROOT / UNSEEN).exists():  # a run not committed yet
        unseen_source, unseen_data = _load(UNSEEN)
        unseen_report = BenchReport.model_validate(unseen_data)
        unseen = [
            "## Workloads the tuner was not developed on",
            "",
            "Heavy-tailed item latency, large numpy items, tiny epochs with an expensive"
            " open, a collate-heavy loader (held out: never run while the tuner was"
            " developed) and a pure-Python tokenizer, in a run of their own.",
            "",
            *_stamped(unseen_source, headline(unseen_report)),
            bench_targets(unseen_report),
            "",
        ]
    return "\n".join(
        [
            "# Offline tuning: `autotune bench`",
            "",
            "Each workload is tuned three times (seeds 0-2) with the default 60 s budget, against"
            " an exhaustive grid over the same space, PyTorch's defaults and the"
            " `num_workers = CPUs` heuristic, all re-measured side by side; each tuning's recorded"
            " rate is then checked"
            " against steady windows of a plain training loop. Every column shows the **worst** of"
            " the three tunings on its own measure. Columns and targets:"
            " [How it works: the search](../how-it-works/search.md#the-bench).",
            "",
            *_stamped(source, table),
            bench_targets(report),
            "",
            *notes_lines(report),
            *unseen,
            *_sections(OFFLINE_RERUNS, BenchReport, headline, bench_targets),
            "## Earlier: `autotune bench --quick`",
            "",
            quick.stamp(),
            "",
            '!!! note "Historical record"',
            f"    {quick.historical}",
            "",
            "Its table is in `results/bench/bench-quick.md`, in that day's format.",
            "",
        ]
    )


def _output(rel: str, intro: list[str], after: tuple[str, ...] = ()) -> list[str]:
    """A committed benchmark output as a fenced block between its text, where it exists."""
    if not (ROOT / rel).exists():
        return []
    text = (ROOT / rel).read_text().rstrip()
    return [*intro, "", "```", text, "```", "", *([*after, ""] if after else [])]


def online_page() -> str:
    lines = [
        "# Online tuning: `autotune bench --online`",
        "",
        "A fixed training runs three ways: (a) PyTorch's defaults, (b) `autotune.DataLoader`"
        " tuning online from them, (c) the exhaustive grid's best from step 0, the ideal no"
        " tuner can beat. *(b)/(c) whole run* includes the exploration; *after tuning* starts"
        " where (b) stopped exploring. Targets: ≥ 0.95 whole run, ≥ 0.97 after tuning."
        " `--ranks 2` runs each way as two DDP ranks on one node, against the best per-rank"
        " configuration from step 0. The short run (`short-run`: 160 steps in all, its"
        " length told to (b)) is judged against the fastest hand-set configuration over the"
        " same 160 steps.",
        "",
        "## Per workload, the newest figures",
        "",
        *summary(ONLINE + ONLINE_45),
        "## Every run",
        "",
        "Issue 45's runs of a workload at a time, side by side with the code when it was filed,"
        " are in [`results/bench/online-45/notes.md`](../../results/bench/online-45/notes.md),"
        " with the command of each. The runs below are of several workloads each.",
        "",
    ]
    lines += _sections(ONLINE, OnlineReport, online_table, online_targets)
    lines += _output(
        TUTORIAL_CHECK,
        [
            "## A real short script under `autotune run`",
            "",
            "A 160-step training in the shape of PyTorch's *Data Loading Optimization*"
            " tutorial (`tests/frameworks/tutorial_short.py`: 512 items of 5 ms, a small CNN"
            " on the CPU), run four ways in alternating order, 3 rounds: its baseline loader,"
            " its hand-tuned one, and the baseline script unmodified under `autotune run`"
            " with and without `--epochs 10`. *training*: the script's own time from before"
            " the first `iter()` to the last step; *process*: the whole command's.",
        ],
    )
    lines += _output(
        REPEATED_RUNS,
        [
            "## Repeated runs: the memory of earlier runs",
            "",
            "The same tutorial-shaped script run 3 times in a row under `autotune run` with"
            " one memory folder (a fresh one each round), each run paired with the"
            " tutorial's hand-tuned loader (`w4 pf2 persist`) run next to it, the order"
            " flipped by round, 3 rounds; the figure is hand-tuned time over `autotune run`"
            " time. Then a drifted workload: a run at 5 ms items, then one at 20 ms items"
            " (same dataset, same memory). Targets: run 1 ≥ 0.95, runs 2 and 3 ≥ 0.99;"
            " the drift detected, exploring started again in the first epochs.",
        ],
        after=(
            "The run's notes, with the drift check's timing, are in"
            " `results/bench/repeated-runs/notes.md`.",
        ),
    )
    lines += _output(
        TORCHRUN_TWICE,
        [
            "Two DDP ranks (`tests/frameworks/ddp_train.py` under torchrun, 1,200 steps a"
            " rank) run twice with one memory, against the same job with fixed per-rank"
            " configurations, in rounds with a fresh memory each; target: the best fixed"
            " configuration's time / run 2's ≥ 0.98. The best of five single runs reads low by"
            " its luck, so the best is also run again twice, alternated with two more second"
            " runs from a copy of run 1's memory (*re-measured*); the target is read on that"
            " figure. A third run goes on from run 2's memory (where the bound cut run 1's"
            " exploring short, run 2 explores on with a share of its own and run 3 reaps it),"
            " measured the same way. The runs' notes are in"
            " `results/bench/repeated-runs/notes.md`:",
        ],
    )
    lines += _output(
        TORCHRUN_COST,
        [
            "What that job's second run costs against plain torchrun"
            " (`benchmarks/torchrun_cost.py`): plain torchrun"
            " at the second runs' usual choice (P) and at the usual best fixed configuration"
            " (Q), torchrun with autotune's boot and every knob fixed (K: the ranks' part of"
            " autotune's cost), `autotune run` with every knob fixed (F: its own cost, nothing"
            " tuned), and"
            " second runs (R), alternated:",
        ],
    )
    lines += _output(
        JOB_COST,
        [
            "What `autotune run` adds to any job, in seconds, whatever its length"
            " (`benchmarks/job_cost.py`): a short job of the same two ranks, plain torchrun (P),"
            " torchrun with autotune's boot and every knob fixed (K), `autotune run` with every"
            " knob fixed (F), alternated; the job's wall and each rank's own CPU time. Most of"
            " it is each rank's import of the online tuner, which a rank pays before its first"
            " batch:",
        ],
    )
    lines += _output(
        JOB_COST_LONG,
        [
            "The same job with 1,200 steps a rank instead of 50: a rank's extra CPU does not"
            " grow with the steps (a cost per job, not per step); the walls scatter more than"
            " the difference:",
        ],
    )
    lines += _output(
        START_COST,
        [
            "What one process that `autotune run` starts pays, by cause, in its own CPU seconds"
            " (`benchmarks/start_cost.py`): a short loop plain (P), after importing autotune's"
            " pydantic models alone (Y), under autotune's boot with every knob fixed and the"
            " package's bytecode compiled, as pip installs it (K), and the same compiling"
            " autotune from source in the process (C), as a checkout does where"
            " PYTHONDONTWRITEBYTECODE is set (the 2-rank jobs above ran that way), alternated."
            " pydantic and the models are most of K; the rank that writes the run folder"
            " imports them anyway when its exploring (or its check) ends, so an online start"
            " without them would save a 2-rank job about 0.1 s:",
        ],
    )
    lines += _output(
        SPAWN_WORKERS,
        [
            "What `autotune run` adds to a loader whose workers are spawned, each a fresh"
            " interpreter that imports the script and torch (`benchmarks/spawn_workers.py`):"
            " plain Python (P), autotune's boot with every knob fixed (K) and an older"
            " checkout's (O), alternated:",
        ],
    )
    lines += _output(
        HUNG_CANDIDATE,
        [
            "What a tuned configuration whose worker hangs costs the training loop"
            " (`benchmarks/hung_candidate.py`): 3 short epochs tuned over 0-2 workers, where the"
            " second worker of any pool hangs; the loop's seconds at two `candidate_timeout_s`,"
            " this checkout (N) and an older one (O), alternated:",
        ],
    )
    lines += _output(
        PREFETCH_DEPTH,
        [
            "## Prefetch depth over short epochs",
            "",
            "Why a pool's first measurement over whole epochs runs at `prefetch_factor=1`"
            " (`benchmarks/prefetch_depth.py`): the plain training loop on the two 30-step-epoch"
            " workloads, persistent pools at prefetch 2 and 1, alternated by round:",
        ],
    )
    lines += _output(
        CLIMB_SIM,
        [
            "## The climb on a simulated clock",
            "",
            "The online climb itself, fed the steps of a model of torch's in-order DataLoader"
            " over each `sim:` workload (`benchmarks/climb_sim.py`: waits, backlogs, pool"
            " start-ups and opens, on a simulated clock, no machine noise), against the best of"
            " the simulated grid from step 0, over 10 shuffles. It separates what the climb"
            " decides from what the machine's scatter does: after tuning it reaches the grid's"
            " best on every workload; where the whole run falls short, the start's own costs"
            " are the cause (the notes: `results/bench/online-redepth/notes.md`):",
        ],
    )
    for start in CLIMB_SIM_STARTS:
        label = start.replace("-", " ")
        lines += _output(
            f"results/bench/climb-sim/before-d1ce454/start-{start}/table.out",
            [
                f"## The climb from a script's `{label}`, simulated" if start == "w2-pf2" else "",
                *(
                    [
                        "Scripts often set `num_workers`. Before `d1ce454`, a start with workers"
                        " measured no fetch to predict from, so the climb went up the ladder a"
                        " rung at a time, and where each pool start pays the dataset's open its"
                        " bound stopped it a rung or two above the start. The same simulation"
                        " from a script's own configuration, before:",
                    ]
                    if start == "w2-pf2"
                    else [f"From `{label}`, before:"]
                ),
            ],
        )
        lines += _output(
            f"results/bench/climb-sim/start-{start}/table.out",
            [
                "and now, the start's own pool predicting the count from its rate and its"
                " workers' CPU:"
            ],
        )
    lines += _output(
        POOL_START,
        [
            "The same on the machine (`results/bench/online-pool-start/run.sh`, notes in"
            " `notes.md` there): `autotune bench --online --start`, 3 rounds a side, new and old"
            " code one after the other, alone:",
        ],
    )
    lines += _output(
        EPOCH_STEADY,
        [
            "Over short epochs, a start with workers reads its workers' scaling from its steady"
            " steps (`79b6098`: never a whole-epoch window's rate, which holds each epoch's"
            " restart). On the machine, the same way (`results/bench/online-epoch-steady`):",
        ],
    )
    lines += _output(
        LAST_BATCH_CPU,
        [
            "Over short epochs, the workers' CPU is read at the epoch's last batch (`ae12523`):"
            " read as the epoch ended, torch had shut a non-persistent pool down, and the start"
            " had nothing to predict from (`results/bench/online-last-batch-cpu`):",
        ],
    )
    lines += _output(
        RESUME_SIM,
        [
            "A start with too few workers whose candidate's start-up (a 2 s open in every"
            " worker) the first horizon cannot repay stopped exploring before it, for the whole"
            " run. A run that outlives its horizon now doubles it and resumes where the steps it"
            " expects left repay the start-up: on short-epochs from `w2 pf2` at step 2,400. A"
            " 3,000-step run ends too soon after to earn it back; longer ones gain"
            " (`results/bench/online-resume`, simulated, old and new code):",
        ],
    )
    lines += _output(
        RESUME_MACHINE,
        [
            "On the machine, 12,000 steps, 2 rounds a side (`benchmarks/online_ab.sh`): both"
            " rounds of the new code resumed at step 4,800 and left the starved start:",
        ],
    )
    lines += _output(
        KEEP_POOL,
        [
            "A start with workers and no persistence, whose exploring chooses the same workers"
            " persistent, keeps its running pool (`943994b`): it used to start every worker, and"
            " its dataset's open, once more at the next epoch. On the machine, 3 rounds a side"
            " (`results/bench/online-keep-pool`, with the simulated tables' changes in"
            " `notes.md`):",
        ],
    )
    lines += _output(
        HAND_OVER,
        [
            "The hand-over of a ready batch counted apart from the wait for batches not yet made"
            " (`86c1330`): a pool predicts its workers' speed only from the latter, and a tie goes"
            " to the cheaper configuration unless only its loop waits for batches. On the"
            " machine, 3 rounds a side (`results/bench/online-hand-over`, with the simulated"
            " tables' changes and an earlier version's runs in `notes.md`):",
        ],
    )
    lines += _output(
        RAM_WINDOW,
        [
            "Whether the RAM reading of a configuration's pool (for the cost order) lowers the"
            " window it runs beside (`benchmarks/ram_window.py`): the same job's first runs on"
            " the current code and an older one, alternated; each configuration's second window"
            " over its others:",
        ],
    )
    return "\n".join(lines)


def accuracy_page() -> str:
    lines = [
        "# Burst accuracy: `autotune bench --accuracy`",
        "",
        "Does a short burst measure the rate a configuration sustains? Each configuration's"
        " median burst (run exactly as a tuner trial) over its median 20 s steady window;"
        " target within ±5%.",
        "",
    ]
    lines += _sections(ACCURACY, AccuracyReport, accuracy_table, lambda report: "")
    return "\n".join(lines)


def overhead_page() -> str:
    source, data = _load(OVERHEAD)
    rows = ["| variant | pairs | overhead (median of pairs) |", "|---|---:|---:|"]
    rows += [
        f"| {name} | {v['pairs']} | {v['overhead_pct']:+.2f}% |"
        for name, v in data["variants"].items()
    ]
    stage = data.get("stage_cost") or {}
    accounted = data.get("accounted") or {}
    return "\n".join(
        [
            "# Overhead of autotune's measuring: `autotune overhead`",
            "",
            "A plain loop and an instrumented one alternate on one loader in short segments; the"
            " control row (plain against plain) shows the machine's own noise. Where the noise is"
            " larger than the 2% budget, the directly accounted cost decides.",
            "",
            *_stamped(source, "\n".join(rows)),
            "Accounted on the training thread: at most"
            f" **{accounted.get('bound_pct', float('nan')):.2f}%** of the step; per-stage timing"
            f" inside the workers: at most **{stage.get('bound_pct', float('nan')):.2f}%**"
            f" of a worker's CPU. Control noise {data['noise_pct']:.1f}%; within budget:"
            f" {'yes' if data['within_budget'] else 'no'}.",
            "",
        ]
    )


def gpu_page() -> str:
    recipe_src, recipe = _load(GPU_RECIPE)
    m = recipe["measured"]
    tuned = LoaderConfig.from_params({**recipe["dataloader"], **recipe["transfer"]}).label()
    online_src, online = _load(GPU_ONLINE)
    return "\n".join(
        [
            "# On a GPU",
            "",
            "The GPU sessions' own write-ups, with every command and raw log, are"
            " `results/gpu/2026-11-22-h100.md`, `results/gpu/2026-11-23-h100.md`,"
            " `results/gpu/2026-11-26-h200.md`, `results/gpu/2026-11-26-h100.md`,"
            " `results/gpu/2026-11-26-h200-evening.md`, `results/gpu/2026-11-27-h100.md`,"
            " `results/gpu/2026-11-27-h200-evening.md` and `results/gpu/2026-11-27-h200-night.md`.",
            "",
            "## Offline: `autotune tune --device cuda` on the demo",
            "",
            *_stamped(
                recipe_src,
                "| | samples/s |\n|---|---:|\n"
                f"| PyTorch defaults | {m['baseline_samples_per_s']:.1f} |\n"
                f"| tuned: `{tuned}` |"
                f" {m['samples_per_s']:.1f} ({m['speedup']:.2f}x) |",
            ),
            "## Online: `autotune.DataLoader` on the demo",
            "",
            *_online_rows(
                [
                    (online_src, online),
                    _load(H200 + "online-demo.json"),
                    _load(H100 + "online-demo.json"),
                ]
            ),
            *recorded_truth("H200", H200, ("accuracy.json",), "2026-11-26-h200.md"),
            *recorded_truth("H100", H100, H100_ACCURACY, "2026-11-26-h100.md"),
            *recorded_truth(
                "H200, evening",
                H200_EVENING,
                H200_EVENING_ACCURACY,
                "2026-11-26-h200-evening.md",
                verify=False,
            ),
            *recorded_truth(
                "H100, order alternating",
                H100_ALTERNATING,
                ("accuracy.json",),
                "2026-11-27-h100.md",
                verify=False,
            ),
        ]
    )


def _online_rows(runs: list[tuple[Source, Any]]) -> list[str]:
    lines: list[str] = []
    for src, online in runs:
        r = online["rounds"][0]
        lines += _stamped(
            src,
            "| chose | steps exploring | exploration cost | (b)/(c) whole run |"
            " (b)/(c) after tuning | ideal (c) |\n"
            "|---|---:|---:|---:|---:|---|\n"
            f"| {r['chosen']} | {r['exploration_ended_at']} | {r['exploration_cost_s']:.1f} s |"
            f" {r['whole']:.3f} | {r['after']:.3f} | {online['ideal']} |",
        )
    return lines


def recorded_truth(
    gpu: str, folder: str, accuracy: tuple[str, ...], write_up: str, verify: bool = True
) -> list[str]:
    """The recorded figure against `autotune verify` (where its JSON was kept), and bursts against
    steady windows, on one GPU."""
    title = "The recorded figure against plain loops" if verify else "Bursts against plain loops"
    lines = [
        f"## {title} ({gpu})",
        "",
        f"Written up, with the causes found so far, in `results/gpu/{write_up}`.",
        "",
    ]
    if verify:
        verify_src, data = _load(folder + "demo-verify.json")
        t = data["tuned"]
        lines += _stamped(
            verify_src,
            "| | recorded | verified (plain loop) | recorded vs verified |\n|---|---:|---:|---:|\n"
            f"| `{t['label']}` | {data['recorded_samples_per_s']:.1f} |"
            f" {data['verified_samples_per_s']:.1f}"
            f" ({', '.join(f'{x:.1f}' for x in t['samples_per_s'])}) |"
            f" {data['difference_pct']:+.1f}% |",
        )
    # Pooled per configuration, over the files that measured it: the same configuration under
    # several burst settings, never one configuration's bursts against another's windows.
    pooled: dict[str, tuple[list[float], list[float], set[str]]] = {}
    for name in accuracy:
        source, data = _load(folder + name)
        report = AccuracyReport.model_validate(data)
        lines += _stamped(source, accuracy_table(report))
        for row in report.rows:
            bursts, steady, files = pooled.setdefault(row.config, ([], [], set()))
            bursts += row.burst_samples_per_s
            steady += row.steady_samples_per_s
            files.add(name)
    for config, (bursts, steady, files) in pooled.items():
        if len(files) > 1 and bursts and steady:
            b, s = statistics.fmean(bursts), statistics.fmean(steady)
            lines += [
                f"All {len(bursts)} bursts of `{config}` together average {b:.1f} samples/s,"
                f" and the steady windows beside them {s:.1f}: a ratio of **{b / s:.3f}**.",
                "",
            ]
    return lines


def index_page() -> str:
    lines = [
        "# Benchmarks",
        "",
        "Every figure on these pages is read, by `python docs/gen/pages.py`, from a committed file"
        " under `results/` (or an example recipe), and printed with that file's date, commit,"
        " machine and command. Files measured before the bench recorded its commit carry the"
        " commit that added them (git history) and are marked as historical records.",
        "",
        "- [Offline tuning](offline.md) · [Online tuning](online.md) ·"
        " [Burst accuracy](accuracy.md) · [Overhead](overhead.md) · [GPU](gpu.md)",
        "",
        "## Every results file",
        "",
        "| file | command | measured | commit | machine | status |",
        "|---|---|---|---|---|---|",
    ]
    for path in [*all_results(), ROOT / GPU_RECIPE]:
        s, _ = read(path)
        status = "historical" if s.historical else "current"
        lines.append(
            f"| [`{s.path}`]({s.link()}) | `{s.command.replace('|', '/')}` | {s.date} |"
            f" `{s.commit}` | {s.machine} | {status} |"
        )
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    return {
        "benchmarks/index.md": index_page(),
        "benchmarks/offline.md": offline_page(),
        "benchmarks/online.md": online_page(),
        "benchmarks/accuracy.md": accuracy_page(),
        "benchmarks/overhead.md": overhead_page(),
        "benchmarks/gpu.md": gpu_page(),
    }
