#!/bin/bash
# Machine A/B of a start read fed measured for min_windows windows (d328288, reverted in b47d195) against the code
# before it (318a5a5): deep-storage from w8 pf2, 3 rounds a side per pass, two passes (new then
# old in each), alone, each from a clean clone; (c) from results/bench/bench.json. The table:
#   python results/bench/online-pool-start/table.py results/bench/online-fed-start/machine-N
here="$(dirname "$0")"
for pass in 1 2; do
  bash "$here/../../../benchmarks/online_ab.sh" "$here/machine-$pass" d328288 318a5a5 "deep-storage w8-pf2"
done
