#!/bin/bash
# Real A/B of the in-place depth (2120bb2) against the code before it (52f406c, whose autotune is
# 4af3a8c's): `autotune bench --online`, 3 rounds, heavy-tail then deep-storage, new then old,
# one at a time, alone on the machine, each from a clean clone; the ideal (c) read from the grid
# online-final-7eeb293 read (results/bench/bench.json of the faf0263 run, copied to /tmp).
set -u
OUT=/work/main/results/bench/online-redepth
GRID=/tmp/final-grid.json
mkdir -p $OUT
for pair in "new heavy-tail" "old heavy-tail" "new deep-storage" "old deep-storage"; do
  set -- $pair; way=$1; w=$2
  src=/tmp/ab-$way
  echo "$(date -u +%H:%M:%S) $way $w start load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/run.log
  (cd $src && PYTHONPATH=$src PYTHONDONTWRITEBYTECODE= /work/main/.venv/bin/python -m autotune bench \
    --online --no-defaults --no-grid --rounds 3 --grid-from $GRID --workloads $w \
    --out $OUT/$way-$w > $OUT/$way-$w.log 2>&1)
  echo "$(date -u +%H:%M:%S) $way $w exit $?" >> $OUT/run.log
done
echo ALLDONE >> $OUT/run.log
