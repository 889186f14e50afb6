#!/bin/bash
# ab5bd00 (where a window is a whole epoch, the climb's jump runs at the shallowest prefetch)
# against the code before it (fc7829b), side by side through ../online-45/ab.sh: clean clones at
# /tmp/ab-old and /tmp/ab-new, the two short-epoch workloads, 3 rounds each, the ideal read from
# the committed grid. Run as: ./run.sh > run.log
OUT=${OUT:-/work/main/results/bench/prefetch-short-epochs} \
  GRID=${GRID:-/work/main/results/bench/bench.json} \
  WORKLOADS=${WORKLOADS:-open-30 tiny-epochs} \
  exec "$(dirname "$0")/../online-45/ab.sh"
