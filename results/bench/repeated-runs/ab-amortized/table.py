"""The A/B of the amortized exploration bound (a343138) against the bound spanning runs
(4fdcc57) on benchmarks/torchrun_twice.py's 2-rank job: each N.out is one 1-round run of that
benchmark on one code (old: 4fdcc57, new: a343138), alternated as driver.log shows; rounds 4-6
carry the third run. Prints each round's figures and their medians per code.
Run from the repository root: python results/bench/repeated-runs/ab-amortized/table.py"""

import re
import statistics
from pathlib import Path

HERE = Path(__file__).parent
FIGURE = re.compile(r"re-measured ([0-9.]+)")

for code in ("old", "new"):
    run2, run3 = [], []
    for n in range(1, 7):
        text = (HERE / f"{code}-{n}.out").read_text()
        line = next(x for x in text.splitlines() if x.startswith("round 1:"))
        figures = [float(x) for x in FIGURE.findall(line)]
        run2.append(figures[0])
        run3 += figures[1:]
        print(
            f"{code} {n}: run 2 re-measured {figures[0]:.3f}"
            + (f", run 3 re-measured {figures[1]:.3f}" if len(figures) > 1 else "")
        )
    print(
        f"{code}: run 2 median of {len(run2)} {statistics.median(run2):.3f};"
        f" run 3 median of {len(run3)} {statistics.median(run3):.3f}"
    )
