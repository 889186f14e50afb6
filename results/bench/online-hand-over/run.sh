#!/bin/bash
# Machine A/B of the hand-over counted apart from the wait for batches (86c1330; 8faebd9, with
# the extra rounds of feeding that 86c1330 dropped, is in machine-8faebd9) against the code before
# it (1c93140): 3 rounds, new then old per workload, alone, each from a clean clone; (c) from
# results/bench/bench.json. The table: python results/bench/online-pool-start/table.py \
#   results/bench/online-hand-over/machine
exec bash "$(dirname "$0")/../../../benchmarks/online_ab.sh" "$(dirname "$0")/machine" 86c1330 1c93140 \
  "tiny-epochs w8-pf2" "deep-storage w8-pf2"
