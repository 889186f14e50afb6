#!/bin/bash
# Machine A/B of the pool kept when persistence turns on (943994b) against the code before it
# (ac08f92): 3 rounds, new then old per workload, alone, each from a clean clone; (c) from
# results/bench/bench.json. The table: python results/bench/online-pool-start/table.py \
#   results/bench/online-keep-pool/machine
exec bash "$(dirname "$0")/../../../benchmarks/online_ab.sh" "$(dirname "$0")/machine" 943994b ac08f92 \
  "short-epochs w4-pf2" "open-300 w8-pf2"
