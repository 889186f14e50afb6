#!/bin/bash
# Issue 45's online bench on the final code (2586f71: the band-decided confirm 1358da7 and every
# change before it), one workload at a time, alone on the machine, from a clean clone (SRC),
# reading the ideal from the committed grid (results/bench/bench.json, copied so nothing can
# replace it mid-run). photos is left out: about an hour on its own. The same script ran c83c13d
# (SRC=/tmp/final45) until 1358da7 was found from its heavy-tail round: ../final-c83c13d.
PY=/work/main/.venv/bin/python
SRC=${SRC:-/tmp/final45b}
GRID=${GRID:-/tmp/final45-grid.json}
OUT=${OUT:-/work/main/results/bench/online-45/final}
for wl in ${WORKLOADS:-heavy-tail in-memory short-run short-epochs large-items tokenizer collate-heavy demo tiny-epochs open-30 open-80 open-300 storage deep-storage held-out large-numpy cpu-heavy slow-accelerator}; do
  echo "$(date -u +%H:%M:%S) $wl start load $(cut -d' ' -f1 /proc/loadavg)"
  (cd $SRC && PYTHONPATH=$SRC $PY -m autotune bench --online --no-defaults --no-grid --rounds 3 \
    --grid-from $GRID --workloads $wl --out $OUT/$wl > $OUT/$wl.log 2>&1)
  echo "$(date -u +%H:%M:%S) $wl exit $?"
done
echo ALLDONE
