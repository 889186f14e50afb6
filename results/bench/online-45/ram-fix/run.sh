#!/bin/bash
# Issue 45's online bench on in-memory and large-items, side by side: 81ddf26 (before the RAM
# reading moved out of the windows, /tmp/prev81) and aa9f9f4 (after, /tmp/nowaa), PYTHONPATH set
# to each, one run at a time, both read from the same grid (results/bench/bench.json).
# Ran as WORKLOADS=in-memory at 21:20 UTC, then WORKLOADS=large-items (run.log).
PY=/work/main/.venv/bin/python
GRID=/work/main/results/bench/bench.json
OUT=/work/main/results/bench/online-45/ram-fix
for wl in ${WORKLOADS:-in-memory large-items}; do
for side in $( [ $wl = in-memory ] && echo "after before" || echo "before after" ); do
  if [ $side = before ]; then dir=/tmp/prev81; else dir=/tmp/nowaa; fi
  echo "$(date -u +%H:%M:%S) $side $wl start load $(cut -d' ' -f1 /proc/loadavg)"
  (cd $dir && PYTHONPATH=$dir $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
    --grid-from $GRID --workloads $wl --out $OUT/$side-$wl > $OUT/$side-$wl.log 2>&1)
  echo "$(date -u +%H:%M:%S) $side $wl exit $?"
done
done
