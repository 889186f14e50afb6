#!/bin/bash
# Real A/B of the whole-epoch windows' steady steps (a start with workers over short epochs reads
# its workers' scaling from the steps past the segment's warm-up) against the code before it
# (e9ff929): `autotune bench --online --start`, 3 rounds, new then old per workload, one at a time,
# alone on the machine, each from a clean clone (/tmp/ab-new, /tmp/ab-old); the ideal (c) read from
# results/bench/bench.json (4af3a8c's grid; the offline code is unchanged since).
set -u
OUT=/work/main/results/bench/online-epoch-steady
GRID=/work/main/results/bench/bench.json
mkdir -p $OUT
for run in "new tiny-epochs w2-pf2" "old tiny-epochs w2-pf2" "new open-30 w2-pf2" "old open-30 w2-pf2" \
           "new open-30 w8-pf2" "old open-30 w8-pf2"; do
  set -- $run; way=$1; w=$2; start=${3//-/ }
  src=/tmp/ab-$way
  echo "$(date -u +%H:%M:%S) $way $w from $start start load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/run.log
  (cd $src && PYTHONPATH=$src PYTHONDONTWRITEBYTECODE= /work/main/.venv/bin/python -m autotune bench \
    --online --no-defaults --no-grid --rounds 3 --grid-from $GRID --workloads $w --start "$start" \
    --out $OUT/$way-$w-$3 > $OUT/$way-$w-$3.log 2>&1)
  echo "$(date -u +%H:%M:%S) $way $w exit $?" >> $OUT/run.log
done
echo ALLDONE >> $OUT/run.log
