#!/bin/bash
# Real A/B of the workers' CPU read at a short epoch's last batch (ae12523) against the code before
# it (fbc970c, which read it as the epoch ended, after torch had shut a non-persistent pool down):
# `autotune bench --online --start`, 3 rounds, new then old per workload, one at a time, alone,
# each from a clean clone (/tmp/ab-new, /tmp/ab-old); (c) from results/bench/bench.json.
set -u
OUT=/work/main/results/bench/online-last-batch-cpu
GRID=/work/main/results/bench/bench.json
mkdir -p $OUT
for run in "new open-30 w2-pf2" "old open-30 w2-pf2" "new tiny-epochs w2-pf2" "old tiny-epochs w2-pf2"; do
  set -- $run; way=$1; w=$2; start=${3//-/ }
  src=/tmp/ab-$way
  echo "$(date -u +%H:%M:%S) $way $w from $start start load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/run.log
  (cd $src && PYTHONPATH=$src PYTHONDONTWRITEBYTECODE= /work/main/.venv/bin/python -m autotune bench \
    --online --no-defaults --no-grid --rounds 3 --grid-from $GRID --workloads $w --start "$start" \
    --out $OUT/$way-$w-$3 > $OUT/$way-$w-$3.log 2>&1)
  echo "$(date -u +%H:%M:%S) $way $w exit $?" >> $OUT/run.log
done
echo ALLDONE >> $OUT/run.log
