"""Where issue 48's 2-rank job loses against plain torchrun: the job of torchrun_twice.py
(tests/frameworks/ddp_train.py, 2 gloo ranks, 2 ms items, 2 epochs of 600 steps a rank), four
variants alternated, the order reversed every other round:

- P: plain torchrun, fixed `w4 pf8` (the second runs' usual choice, no persistent workers);
- Q: plain torchrun, fixed `w4 pf4 persist` (the usual best fixed configuration);
- K: plain torchrun with autotune's boot folder on PYTHONPATH and the options `autotune run`
  would pass (every knob fixed at P's, no memory): the ranks' share of autotune's cost, without
  `autotune run`'s own process;
- F: `autotune run` with every knob fixed at P's (`--fix` each, no memory): autotune's own cost,
  with nothing tuned;
- R: `autotune run`, a second run, each from a copy of the memory one first run left.

Q / P is what the choice costs, P / F what autotune's process costs (P / K the ranks' part of
it), Q / R the issue's figure.
Run from the repository root: python benchmarks/torchrun_cost.py [ROUNDS]"""

import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.cli.run_cmd import child_environment
from autotune.made_by import git_commit
from autotune.online.options import TUNED, OnlineOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.repeated_runs import under_autotune_run  # noqa: E402
from benchmarks.torchrun_twice import OUT, ROOT, _torchrun  # noqa: E402

P = "num_workers=4,prefetch_factor=8,persistent_workers=0"
Q = "num_workers=4,prefetch_factor=4,persistent_workers=1"
VARIANTS = "PQKFR"


def stamp(script: str, *args: object) -> str:
    """The first line of a 2-rank bench's output: its command, date, commit and machine."""
    return (
        f"# python benchmarks/{' '.join(map(str, (script, *args)))} -- "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit"
        f" {git_commit()}, {os.cpu_count()} CPUs, no GPU; load average at the start"
        f" {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    out = [stamp("torchrun_cost.py", rounds)]
    times: dict[str, list[float]] = {k: [] for k in VARIANTS}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        wall, lines = _timed(
            under_autotune_run(str(tmp / "memory"), str(tmp / "results"), _torchrun())
        )
        out += [f"run 1: {wall:.2f}s", *(f"  {line}" for line in lines)]
        for r in range(rounds):
            for k in round_order(VARIANTS, r):
                wall, lines = _timed(*_variant(k, tmp, r))
                times[k].append(wall)
                out += [f"round {r + 1} {k}: {wall:.2f}s", *(f"  {line}" for line in lines)]
    median = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        out.append(f"{k}: median {median[k]:.2f}s ({', '.join(f'{t:.2f}' for t in v)})")
    out += [
        f"Q / P (the choice): {median['Q'] / median['P']:.3f}",
        f"P / F (autotune's own cost, nothing tuned): {median['P'] / median['F']:.3f}",
        f"P / K (the ranks' part of it): {median['P'] / median['K']:.3f}",
        f"Q / R (best fixed / run 2; target >= 0.98): {median['Q'] / median['R']:.3f}",
        f"P / R: {median['P'] / median['R']:.3f}",
        f"load average at the end {os.getloadavg()[0]:.1f}",
    ]
    print("\n".join(out))
    (OUT / "torchrun_cost.out").write_text("\n".join(out) + "\n")


def _variant(k: str, tmp: Path, r: int) -> tuple[list[str], dict[str, str] | None]:
    if k in "PQ":
        return _torchrun(), {**os.environ, "DDP_LOADER": P if k == "P" else Q}
    if k == "K":
        fixed = OnlineOptions(fixed=TUNED, memory=False, results_dir=tmp / "results")
        return _torchrun(), {**child_environment(fixed), "DDP_LOADER": P}
    if k == "F":
        command = under_autotune_run("off", str(tmp / "results"), _torchrun())
        at = command.index("--")
        command[at:at] = [arg for name in TUNED for arg in ("--fix", name)]
        return command, {**os.environ, "DDP_LOADER": P}
    memory = tmp / f"memory-{r}"
    shutil.copytree(tmp / "memory", memory)
    return under_autotune_run(str(memory), str(tmp / "results"), _torchrun()), None


def _timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    wall = time.perf_counter() - t0
    lines = [f"exit {done.returncode}"] + [
        line
        for line in done.stdout.splitlines()
        if line.startswith(("RANK 0", "autotune.DataLoader"))
    ]
    return wall, lines


if __name__ == "__main__":
    main()
