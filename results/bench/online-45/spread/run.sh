#!/bin/bash
# The same side-by-side bench as ../stall/run.sh: before 1a56ab1 (the stall rule at 0.3 of the
# median alone, /tmp/b45) and after, the spread clause added (/tmp/spread), into this folder.
# Ran as WORKLOADS="in-memory heavy-tail" REPS=2, then WORKLOADS="short-epochs large-items" REPS=1.
OUT=/work/main/results/bench/online-45/spread BEFORE_DIR=/tmp/b45 AFTER_DIR=/tmp/spread \
  exec bash "$(dirname "$0")/../stall/run.sh"
