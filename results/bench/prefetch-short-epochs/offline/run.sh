#!/bin/bash
# The offline seeds' prefetch rule (f591466) against the code before it (1f45018), side by side:
# clean clones at /tmp/ab-old and /tmp/ab-new, `autotune bench` (3 tunings, the grid, the side by
# side) on the two short-epoch workloads, one at a time, the code order reversed every other
# workload, alone on the machine. Run as: ./run.sh > run.log
PY=/work/main/.venv/bin/python
OUT=${OUT:-/work/main/results/bench/prefetch-short-epochs/offline}
i=0
for wl in ${WORKLOADS:-open-30 tiny-epochs}; do
  if [ $((i % 2)) -eq 0 ]; then order="old new"; else order="new old"; fi
  for code in $order; do
    SRC=/tmp/ab-$code
    mkdir -p $OUT/$code
    echo "$(date -u +%H:%M:%S) $wl $code start load $(cut -d' ' -f1 /proc/loadavg)"
    (cd $SRC && PYTHONPATH=$SRC $PY -m autotune bench --workloads $wl --out $OUT/$code/$wl \
      > $OUT/$code/$wl.log 2>&1)
    echo "$(date -u +%H:%M:%S) $wl $code exit $?"
  done
  i=$((i + 1))
done
echo ALLDONE
