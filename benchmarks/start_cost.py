"""What autotune costs one training process that `autotune run` starts, in its own CPU seconds:
the per-job cost each rank of issue 48's 2-rank job pays, split by cause. One process, one epoch
of a short loop (benchmarks/start_loop.py: 100 steps of 8 items, 1 ms of storage latency an item,
`num_workers=2`), four variants alternated, the order reversed every other round:

- P: plain, torch's DataLoader;
- Y: P after importing autotune's pydantic models (the online options, the memory's records, the
  recipe): what pydantic costs a process that loads them, at most what an online start free of
  pydantic would save;
- K: P under autotune's boot folder, as `autotune run` starts a rank, every knob fixed, no memory:
  autotune's whole cost to the process, its modules loaded from bytecode as an installed package
  loads them (pip compiles them);
- C: K with autotune's modules compiled from source in the process, as an editable checkout runs
  them where PYTHONDONTWRITEBYTECODE=1 (this machine sets it): a cost no installed package pays.

Each process runs through benchmarks/rank_cpu.py, which prints its own CPU seconds; the figures
are medians over the rounds and paired differences with P from the same round.
Run from the repository root: python benchmarks/start_cost.py [ROUNDS]"""

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from autotune.cli.run_cmd import child_environment
from autotune.online.options import TUNED, OnlineOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import round_order  # noqa: E402
from benchmarks.rank_cpu import LINE  # noqa: E402
from benchmarks.torchrun_cost import stamp  # noqa: E402
from benchmarks.torchrun_twice import OUT, ROOT  # noqa: E402

VARIANTS = "PYKC"
LOOP = Path(__file__).with_name("start_loop.py")
RANK_CPU = Path(__file__).with_name("rank_cpu.py")
PYDANTIC_MODELS = "autotune.online.options,autotune.memory.record,autotune.recipe.model"


def own_cpu(env: dict[str, str]) -> float:
    """The loop's process's own CPU seconds (rank_cpu.py's line)."""
    command = [sys.executable, str(RANK_CPU), str(LOOP)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    found = LINE.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return float(found.group(2))


def source_only(tmp: Path) -> Path:
    """A folder holding a copy of the autotune package without its bytecode."""
    folder = tmp / "source-only"
    shutil.copytree(
        ROOT / "autotune", folder / "autotune", ignore=shutil.ignore_patterns("__pycache__")
    )
    return folder


def environments(tmp: Path) -> dict[str, dict[str, str]]:
    plain = {k: v for k, v in os.environ.items() if k != "AUTOTUNE_ONLINE"}
    fixed = child_environment(
        OnlineOptions(fixed=TUNED, memory=False, results_dir=tmp / "results"), plain
    )
    return {
        "P": plain,
        "Y": {**plain, "START_LOOP_IMPORTS": PYDANTIC_MODELS},
        "K": fixed,
        # A copy of the package without its bytecode, found first: torch's stays in use.
        "C": {
            **fixed,
            "PYTHONPATH": os.pathsep.join((fixed["PYTHONPATH"], str(source_only(tmp)))),
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    compileall.compile_dir(ROOT / "autotune", quiet=1)  # as pip leaves an installed package
    out = [stamp("start_cost.py", rounds), f"loop: {LOOP.name}, one process a run"]
    cpu: dict[str, list[float]] = {k: [] for k in VARIANTS}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        envs = environments(tmp)
        for r in range(rounds):
            for k in round_order(VARIANTS, r):
                cpu[k].append(own_cpu(envs[k]))
    for k, v in cpu.items():
        figures = ", ".join(f"{t:.3f}" for t in v)
        out.append(f"own CPU {k}: median {statistics.median(v):.3f}s ({figures})")
    for k, what in (
        ("Y", "pydantic and autotune's models"),
        ("K", "autotune, every knob fixed"),
        ("C", "autotune compiled from source"),
    ):
        paired = [a - b for a, b in zip(cpu[k], cpu["P"], strict=True)]
        out.append(
            f"{k} - P ({what}): median {statistics.median(paired):+.3f}s"
            f" ({', '.join(f'{d:+.3f}' for d in paired)})"
        )
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out))
    (OUT / "start_cost.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
