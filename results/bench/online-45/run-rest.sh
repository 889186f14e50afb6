#!/bin/bash
# Issue 45's online bench side by side, the rest of the workloads (photos left out: about an hour
# a code): 22dae0d (/tmp/old22) and f19377c (/tmp/newf19, a clone of main), PYTHONPATH set to
# each; one workload at a time, the code order alternating by workload.
PY=/work/main/.venv/bin/python
GRID=/work/main/results/bench/bench.json
mkdir -p /tmp/o45r
i=0
for wl in storage deep-storage held-out large-numpy cpu-heavy slow-accelerator; do
  for side in $( [ $((i % 2)) -eq 0 ] && echo "after before" || echo "before after" ); do
    if [ $side = before ]; then dir=/tmp/old22; else dir=/tmp/newf19; fi
    echo "$(date -u +%H:%M:%S) $side $wl start load $(cut -d' ' -f1 /proc/loadavg)"
    (cd $dir && PYTHONPATH=$dir $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
      --grid-from $GRID --workloads $wl --out /tmp/o45r/$side-$wl > /tmp/o45r/$side-$wl.log 2>&1)
    echo "$(date -u +%H:%M:%S) $side $wl exit $?"
  done
  i=$((i+1))
done
echo ALLDONE
