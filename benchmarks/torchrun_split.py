"""Where autotune's own cost goes in torchrun_cost.py's 2-rank job (issue 48), with nothing tuned:
P (plain torchrun, fixed `w4 pf8`), K (the same ranks with autotune's boot folder and options, as
`autotune run` would start them) and F (`autotune run` with every knob fixed), alternated, the
order reversed every other round. Each rank runs tests/frameworks/ddp_train.py through this file,
which stamps the rank's start (its imports done: torch's, and autotune's where booted), the end of
its training loop and its exit; the wall is the whole command's. Per variant, medians over the
rounds (each the slower rank's): imports to the loop's start, the loop, the exit after it, and
what lies outside the ranks (torchrun's start, each rank's interpreter start, `autotune run`).
Run from the repository root: python benchmarks/torchrun_split.py [ROUNDS]"""

import atexit
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RANK_FLAG = "--rank-script"
T0 = time.time()


def _stamp(what: str) -> None:
    os.write(2, f"SPLIT {what} {os.environ.get('RANK', '?')} {time.time() - T0:.4f}\n".encode())


def rank_main(argv: list[str]) -> None:
    """One rank: ddp_train.py's own main, stamped."""
    atexit.register(_stamp, "EXIT")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "frameworks"))
    import ddp_train  # torch's import (and autotune's patch where booted) happens here

    train, say = ddp_train.train, ddp_train._say

    def stamped_train(*args, **kwargs):
        _stamp("START")
        return train(*args, **kwargs)

    def stamped_say(rank, config):
        _stamp("TRAINED")
        say(rank, config)

    ddp_train.train, ddp_train._say = stamped_train, stamped_say
    sys.argv = ["ddp_train.py", *argv]
    ddp_train.main()


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository
    from benchmarks.alternate import round_order
    from benchmarks.torchrun_cost import _variant, stamp
    from benchmarks.torchrun_twice import OUT, ROOT, SCRIPT

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    out = [stamp("torchrun_split.py", rounds)]
    parts: dict[str, list[tuple[float, ...]]] = {k: [] for k in "PKF"}
    with tempfile.TemporaryDirectory() as name:
        for r in range(rounds):
            for k in round_order("PKF", r):
                command, env = _variant(k, Path(name), r)
                at = command.index(str(SCRIPT))
                command[at : at + 1] = [str(Path(__file__).resolve()), RANK_FLAG]
                began = time.perf_counter()
                done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
                wall = time.perf_counter() - began
                row = (wall, *_split(done.stderr, wall))
                parts[k].append(row)
                out.append(
                    f"round {r + 1} {k}: exit {done.returncode}, wall {wall:.2f}s, imports"
                    f" {row[1]:.2f}s, loop {row[2]:.2f}s, exit {row[3]:.3f}s, outside {row[4]:.2f}s"
                )
    names = ("wall", "imports", "loop", "exit", "outside the ranks")
    for k, rows in parts.items():
        medians = [statistics.median(row[i] for row in rows) for i in range(len(names))]
        cells = (f"{n} {m:.3f}s" for n, m in zip(names, medians, strict=True))
        out.append(f"{k}: medians " + ", ".join(cells))
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out))
    (OUT / "torchrun_split.out").write_text("\n".join(out) + "\n")


def _split(stderr: str, wall: float) -> tuple[float, float, float, float]:
    """(imports, loop, exit, outside the ranks) of the slower rank, from the ranks' stamps."""
    stamps = {
        (what, rank): float(at)
        for what, rank, at in re.findall(r"^SPLIT (\w+) (\S+) ([\d.]+)$", stderr, re.M)
    }
    ranks = {rank for _, rank in stamps}
    whole = all((what, r) in stamps for what in ("START", "TRAINED", "EXIT") for r in ranks)
    if not ranks or not whole:
        return (float("nan"),) * 4  # a rank that did not stamp each point: see the exit code
    start = max(stamps["START", r] for r in ranks)
    loop = max(stamps["TRAINED", r] - stamps["START", r] for r in ranks)
    leave = max(stamps["EXIT", r] - stamps["TRAINED", r] for r in ranks)
    last = max(stamps["EXIT", r] for r in ranks)
    return start, loop, leave, wall - last


if __name__ == "__main__":
    if sys.argv[1:2] == [RANK_FLAG]:
        rank_main(sys.argv[2:])
    else:
        main()
