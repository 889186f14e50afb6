#!/bin/bash
# The same side-by-side bench as ../stall/run.sh, its after code b55f0c7 (the stall rule at 0.3
# of the median, /tmp/new3), into this folder. Ran as WORKLOADS="heavy-tail in-memory" REPS=2.
OUT=/work/main/results/bench/online-45/stall-03 AFTER_DIR=/tmp/new3 \
  exec bash "$(dirname "$0")/../stall/run.sh"
