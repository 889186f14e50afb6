#!/bin/bash
# Real A/B of the workers' CPU read at a short epoch's last batch (ae12523) against the code before
# it (fbc970c, which read it as the epoch ended, after torch had shut a non-persistent pool down):
# 3 rounds, new then old per workload, alone, each from a clean clone; (c) from
# results/bench/bench.json. The committed runs (run.log) came from this script's first, inline
# version (git show e6f8af5:results/bench/online-last-batch-cpu/run.sh), which ran the same
# `autotune bench --online` commands in the same order; benchmarks/online_ab.sh now runs them.
exec bash "$(dirname "$0")/../../../benchmarks/online_ab.sh" "$(dirname "$0")" ae12523 fbc970c \
  "open-30 w2-pf2" "tiny-epochs w2-pf2"
