#!/bin/bash
# The same side-by-side bench as ../stall/run.sh: before faf0263 (/tmp/final45) and after, a
# start still the best when the climb ends, measured in its one window, measured again before it
# is chosen (/tmp/confirm), into this folder, both reading the ideal from the same grid.
OUT=/work/main/results/bench/online-45/confirm BEFORE_DIR=/tmp/final45 AFTER_DIR=/tmp/confirm \
  exec bash "$(dirname "$0")/../stall/run.sh"
