"""Running a training script under `autotune run` the way a user does (`autotune run --results-dir
R -- python SCRIPT ARGS`, in a subprocess), and reading back the run folders it left."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from autotune.recipe.model import Recipe, load_recipe
from autotune.run_paths import ONLINE_PREFIX, RUNS
from autotune.workload.jpegs import make_jpeg_folder

TESTS = Path(__file__).parent
FRAMEWORKS = TESTS / "frameworks"
THIRD_PARTY = TESTS / "third_party"


def autotune_run_command(results: Path, script: Path | str, *args: str) -> list[str]:
    # The `--` form: everything after it is the script's, flags included.
    return [
        sys.executable,
        "-m",
        "autotune",
        "run",
        "--results-dir",
        str(results),
        "--",
        sys.executable,
        str(script),
        *args,
    ]


def torchrun_command(script: Path | str, *args: str) -> list[str]:
    """`script ARGS` under torchrun: two ranks on this node, their rendezvous on a free port (the
    tests' DDP runs and benchmarks/torchrun_twice.py)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        port,
        str(script),
        *args,
    ]


def autotune_run(
    results: Path, script: Path | str, *args: str, cwd: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        autotune_run_command(results, script, *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def output_tail(done: subprocess.CompletedProcess, chars: int = 4000) -> str:
    """What a failed assertion shows: the end of the run's output, where tracebacks are."""
    return (done.stdout + done.stderr)[-chars:]


def online_folders(results: Path) -> list[Path]:
    return sorted((Path(results) / RUNS).glob(f"*-{ONLINE_PREFIX}*"))


def reports_of_every_loader(results: Path, least: int) -> list[Recipe]:
    """The recipes of the run folders under `results`, at least `least` of them, each with a report
    and each under its own name (the folder's and the recipe's workload name)."""
    folders = online_folders(results)
    assert len(folders) >= least, f"{len(folders)} run folders, expected {least} or more: {folders}"
    recipes = []
    for folder in folders:
        assert (folder / "report.md").is_file(), f"no report.md in {folder}"
        recipes.append(load_recipe(folder / "recipe.json"))
    names = [r.workload.get("name") for r in recipes]
    assert len(set(names)) == len(names), f"two loaders' reports share a name: {names}"
    return recipes


def image_folder(root: Path, train: int, val: int, classes: int = 4) -> Path:
    """`root`/train and `root`/val, ImageFolder layouts of small generated JPEGs (64-128 px a side:
    the scripts' own resizing makes the model's input, and a small source keeps decoding cheap)."""
    make_jpeg_folder(
        root / "train", images=train, classes=classes, seed=0, min_side=64, max_side=128
    )
    make_jpeg_folder(root / "val", images=val, classes=classes, seed=1, min_side=64, max_side=128)
    return root
