#!/bin/bash
# Issue 45's online bench, two codes side by side: each from a clean clone (/tmp/ab-old and
# /tmp/ab-new, checked out at the commits the caller names), one workload at a time, the two codes
# alternated (the order reversed every other workload), alone on the machine, the ideal read from
# the committed grid (results/bench/bench.json, as final/run.sh), 3 rounds each.
# Called by each ab-<commit>/run.sh with OUT (its folder) and WORKLOADS.
PY=/work/main/.venv/bin/python
GRID=${GRID:-/tmp/final45-grid.json}
i=0
for wl in $WORKLOADS; do
  if [ $((i % 2)) -eq 0 ]; then order="old new"; else order="new old"; fi
  for code in $order; do
    SRC=/tmp/ab-$code
    echo "$(date -u +%H:%M:%S) $wl $code start load $(cut -d' ' -f1 /proc/loadavg)"
    (cd $SRC && PYTHONPATH=$SRC $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
      --grid-from $GRID --workloads $wl --out $OUT/$code/$wl > $OUT/$code/$wl.log 2>&1)
    echo "$(date -u +%H:%M:%S) $wl $code exit $?"
  done
  i=$((i + 1))
done
echo ALLDONE
