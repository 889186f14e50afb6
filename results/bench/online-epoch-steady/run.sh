#!/bin/bash
# Real A/B of the whole-epoch windows' steady steps (a start with workers over short epochs reads
# its workers' scaling from the steps past the segment's warm-up, 79b6098) against the code before
# it (e9ff929): 3 rounds, new then old per workload, alone, each from a clean clone; (c) from
# results/bench/bench.json. The committed runs (run.log) came from this script's first, inline
# version (git show fbc970c:results/bench/online-epoch-steady/run.sh), which ran the same
# `autotune bench --online` commands in the same order; benchmarks/online_ab.sh now runs them.
exec bash "$(dirname "$0")/../../../benchmarks/online_ab.sh" "$(dirname "$0")" 79b6098 e9ff929 \
  "tiny-epochs w2-pf2" "open-30 w2-pf2" "open-30 w8-pf2"
