#!/bin/bash
# Issue 45's online bench, side by side: 9367671 (before the stall rule, /tmp/old93) and 4311639
# (after, /tmp/newst; AFTER_DIR for another), PYTHONPATH set to each, one run at a time,
# alternating, both reading the ideal from the same grid (results/bench/bench.json). Runs
# FIRST..REPS of 3 rounds per code, into OUT (BEFORE_DIR for another before code).
PY=/work/main/.venv/bin/python
GRID=/work/main/results/bench/bench.json
OUT=${OUT:-/work/main/results/bench/online-45/stall}
AFTER_DIR=${AFTER_DIR:-/tmp/newst}
BEFORE_DIR=${BEFORE_DIR:-/tmp/old93}
for wl in ${WORKLOADS:-in-memory}; do
for rep in $(seq ${FIRST:-1} ${REPS:-2}); do
for side in $( [ $((rep % 2)) = 1 ] && echo "before after" || echo "after before" ); do
  if [ $side = before ]; then dir=$BEFORE_DIR; else dir=$AFTER_DIR; fi
  echo "$(date -u +%H:%M:%S) $side $wl rep $rep start load $(cut -d' ' -f1 /proc/loadavg)"
  (cd $dir && PYTHONPATH=$dir $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
    --grid-from $GRID --workloads $wl --out $OUT/$side-$wl-$rep > $OUT/$side-$wl-$rep.log 2>&1)
  echo "$(date -u +%H:%M:%S) $side $wl rep $rep exit $?"
done
done
done
