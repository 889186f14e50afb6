"""Issue 48's 2-rank case, as a functional check only (no ratio against a fixed configuration):
tests/frameworks/ddp_train.py (two gloo ranks on the CPU, 3200 items of 2 ms, 2 epochs) run twice
under `autotune run` with one memory folder; each run's report line and each rank's final
configuration. Run from the repository root: python benchmarks/torchrun_twice.py"""

import datetime
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "bench" / "repeated-runs"
SCRIPT = ROOT / "tests/frameworks/ddp_train.py"


def port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def main() -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    out = [
        f"# python benchmarks/torchrun_twice.py -- "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit},"
        " 2 usable CPUs, no GPU; the machine was shared with other engineers' work"
    ]
    with tempfile.TemporaryDirectory() as memory, tempfile.TemporaryDirectory() as results:
        for run in (1, 2):
            command = [
                sys.executable,
                "-m",
                "autotune",
                "run",
                "--results-dir",
                results,
                "--memory",
                memory,
                "--",
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nproc-per-node",
                "2",
                "--master-addr",
                "127.0.0.1",
                "--master-port",
                port(),
                str(SCRIPT),
                "torchrun",
                "3200",
                "2",
            ]
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
            lines = [
                line
                for line in done.stdout.splitlines()
                if line.startswith(("RANK ", "autotune.DataLoader "))
            ]
            out += [
                f"run {run} (exit {done.returncode}):",
                *(f"  {line}" for line in sorted(lines)),
            ]
    print("\n".join(out))
    (OUT / "torchrun_twice.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
