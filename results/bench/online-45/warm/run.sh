#!/bin/bash
# The same side-by-side bench as ../stall/run.sh: before 1a56ab1 (/tmp/b45) and after, a pool's
# first window_s of steps left out of its windows as warm-up (/tmp/warm), into this folder.
# Ran as WORKLOADS="in-memory" REPS=2, then WORKLOADS="heavy-tail" REPS=1.
OUT=/work/main/results/bench/online-45/warm BEFORE_DIR=/tmp/b45 AFTER_DIR=/tmp/warm \
  exec bash "$(dirname "$0")/../stall/run.sh"
