#!/bin/bash
# Real A/B of the pool start's prediction (d1ce454) against the code before it (8a204aa's
# autotune, with d1ce454's benchmarks for --start): `autotune bench --online --start`, 3 rounds,
# (b) starting from a script's own configuration with workers, new then old per workload, one at
# a time, alone on the machine, each from a clean clone (/tmp/ab-new, /tmp/ab-old); the ideal (c)
# read from results/bench/bench.json (4af3a8c's grid, copied to /tmp/grid.json).
set -u
OUT=/work/main/results/bench/online-pool-start
GRID=/tmp/grid.json
mkdir -p $OUT
for run in "new open-300 w2-pf2" "old open-300 w2-pf2" "new heavy-tail w2-pf2" "old heavy-tail w2-pf2" \
           "new cpu-heavy w8-pf2" "old cpu-heavy w8-pf2" "new deep-storage w2-pf2" "old deep-storage w2-pf2"; do
  set -- $run; way=$1; w=$2; start=${3//-/ }
  src=/tmp/ab-$way
  echo "$(date -u +%H:%M:%S) $way $w from $start start load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/run.log
  (cd $src && PYTHONPATH=$src PYTHONDONTWRITEBYTECODE= /work/main/.venv/bin/python -m autotune bench \
    --online --no-defaults --no-grid --rounds 3 --grid-from $GRID --workloads $w --start "$start" \
    --out $OUT/$way-$w > $OUT/$way-$w.log 2>&1)
  echo "$(date -u +%H:%M:%S) $way $w exit $?" >> $OUT/run.log
done
echo ALLDONE >> $OUT/run.log
