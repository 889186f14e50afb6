"""autotune's fixed cost per job, in seconds: what `autotune run` adds to a 2-rank torchrun job
(tests/frameworks/ddp_train.py, two gloo ranks, 2 ms items) when it tunes nothing. The job is
short (one epoch of STEPS steps a rank), so that the start-up and exit costs are most of what
differs; three variants alternated, the order reversed every other round:

- P: plain torchrun, fixed `w4 pf8` ($DDP_LOADER);
- K: the same with autotune's boot folder on PYTHONPATH and the options `autotune run` would pass
  (every knob fixed at P's, no memory): the ranks' part (autotune's imports in each rank, its
  loader's work, its run folder);
- F: `autotune run` with every knob fixed at P's (`--fix` each, no memory): K plus the parent
  process (its imports before the script starts, the report it prints after).

Each round's K - P and F - P are paired differences of neighbours, read as medians over the
rounds: seconds a job pays, whatever its length. The ranks run through benchmarks/rank_cpu.py,
which reads each rank's own CPU seconds (its workers apart): the ranks' part again, scattered
less by the machine's other load than the walls. A longer job (STEPS a rank) tells a cost per job
from a cost per step: only the second grows with the steps. Run from the repository root:
python benchmarks/job_cost.py [ROUNDS] [STEPS]"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.cli.run_cmd import child_environment
from autotune.online.options import TUNED, OnlineOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.rank_cpu import LINE  # noqa: E402
from benchmarks.repeated_runs import under_autotune_run  # noqa: E402
from benchmarks.torchrun_cost import P, stamp  # noqa: E402
from benchmarks.torchrun_twice import OUT, ROOT, SCRIPT  # noqa: E402
from tests.script_runs import torchrun_command  # noqa: E402

STEPS = 50  # a rank's steps by default: 2 ranks x 50 steps x batch 8
VARIANTS = "PKF"


RANK_CPU = Path(__file__).with_name("rank_cpu.py")


def job(steps: int = STEPS) -> list[str]:
    return torchrun_command(RANK_CPU, str(SCRIPT), "torchrun", str(2 * 8 * steps), "1")


def timed(
    command: list[str], env: dict[str, str]
) -> tuple[float, list[float], list[float], str | None]:
    """The job's wall seconds, its ranks' own CPU seconds, their workers' CPU seconds, and what
    went wrong (None: nothing)."""
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    wall = time.perf_counter() - t0
    ranks = LINE.findall(done.stdout)
    cpu, workers = [float(own) for _, own, _ in ranks], [float(w) for _, _, w in ranks]
    if done.returncode != 0 or len(cpu) != 2:
        return wall, cpu, workers, f"exit {done.returncode}, {len(cpu)} ranks' CPU read"
    return wall, cpu, workers, None


def variant(k: str, tmp: Path, steps: int = STEPS) -> tuple[list[str], dict[str, str]]:
    if k == "P":
        return job(steps), {**os.environ, "DDP_LOADER": P}
    if k == "K":
        fixed = OnlineOptions(fixed=TUNED, memory=False, results_dir=tmp / "results")
        return job(steps), {**child_environment(fixed), "DDP_LOADER": P}
    command = under_autotune_run("off", str(tmp / "results"), job(steps))
    at = command.index("--")
    command[at:at] = [arg for name in TUNED for arg in ("--fix", name)]
    return command, {**os.environ, "DDP_LOADER": P}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else STEPS
    out = [
        stamp("job_cost.py", rounds, *([steps] if steps != STEPS else [])),
        f"job: 2 ranks, 1 epoch of {steps} steps a rank, {P}",
    ]
    times: dict[str, list[float]] = {k: [] for k in VARIANTS}
    cpus: dict[str, list[float]] = {k: [] for k in VARIANTS}  # a round's two ranks' mean
    workers: dict[str, list[float]] = {k: [] for k in VARIANTS}  # the same, of their workers
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        for r in range(rounds):
            for k in round_order(VARIANTS, r):
                wall, cpu, worker_cpu, error = timed(*variant(k, Path(name), steps))
                times[k].append(wall)
                cpus[k].append(statistics.mean(cpu) if cpu else float("nan"))
                workers[k].append(statistics.mean(worker_cpu) if worker_cpu else float("nan"))
                if error is not None:
                    failed.append(f"round {r + 1} {k}: {error}")
    for label, figures in (
        ("job wall", times),
        ("a rank's own CPU", cpus),
        ("a rank's workers' CPU", workers),
    ):
        for k, v in figures.items():
            out.append(
                f"{label} {k}: median {statistics.median(v):.3f}s"
                f" ({', '.join(f'{t:.2f}' for t in v)})"
            )
        for k, what in (("K", "the ranks' part"), ("F", "autotune run, whole")):
            paired = [a - b for a, b in zip(figures[k], figures["P"], strict=True)]
            out.append(
                f"{label} {k} - P ({what}): median {statistics.median(paired):+.3f}s"
                f" ({', '.join(f'{d:+.2f}' for d in paired)})"
            )
    out += failed or ["every run exited 0"]
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out))
    name = "job_cost.out" if steps == STEPS else f"job_cost-{steps}steps.out"
    (OUT / name).write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
