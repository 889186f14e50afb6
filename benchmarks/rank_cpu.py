"""Runs a script as `python SCRIPT ARGS` would, and prints at its exit the CPU seconds its own
process used (user + system, its workers apart), the CPU seconds of its children that have ended
(its DataLoader workers, once their pool is shut down) and its wall seconds from here: a rank's
cost is read in CPU time, which the machine's other load scatters less than wall time.
python benchmarks/rank_cpu.py SCRIPT ARGS..."""

import atexit
import os
import re
import resource
import runpy
import sys
import time

START = time.perf_counter()
# The line _report prints, as the benches that run ranks through this script read it back: the
# rank ($RANK, or -), its own CPU seconds, its ended children's.
LINE = re.compile(r"^CPU rank (\S+) own ([\d.]+) workers ([\d.]+)", re.M)


def _report() -> None:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"CPU rank {os.environ.get('RANK', '-')} own {own.ru_utime + own.ru_stime:.3f}"
        f" workers {children.ru_utime + children.ru_stime:.3f}"
        f" wall {time.perf_counter() - START:.3f}",
        flush=True,
    )


if __name__ == "__main__":
    atexit.register(_report)  # first registered, last run: after the script's own exit handlers
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
