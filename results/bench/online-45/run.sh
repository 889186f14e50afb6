#!/bin/bash
# Issue 45's online bench side by side: 22dae0d (/tmp/old22, PYTHONPATH) and HEAD (/work/main),
# one workload at a time, the code order alternating by workload.
PY=/work/main/.venv/bin/python
GRID=/work/main/results/bench/bench.json
i=0
for wl in in-memory short-run short-epochs heavy-tail large-items tokenizer collate-heavy; do
  for side in $( [ $((i % 2)) -eq 0 ] && echo "before after" || echo "after before" ); do
    if [ $side = before ]; then dir=/tmp/old22; pp=/tmp/old22; else dir=/work/main; pp=; fi
    echo "$(date -u +%H:%M:%S) $side $wl start load $(cut -d' ' -f1 /proc/loadavg)"
    (cd $dir && PYTHONPATH=$pp $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
      --grid-from $GRID --workloads $wl --out /tmp/o45/$side-$wl > /tmp/o45/$side-$wl.log 2>&1)
    echo "$(date -u +%H:%M:%S) $side $wl exit $?"
  done
  i=$((i+1))
done
echo ALLDONE
