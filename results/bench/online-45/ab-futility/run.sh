#!/bin/bash
# The futility rule (futility.patch: decision/verdict.py `futile`, a tie that the candidate's
# remaining windows could not resolve is decided from its third window on, not at its sixth)
# against the code before it (8d33059), side by side (../ab.sh: clean clones at /tmp/ab-old at
# 8d33059 and /tmp/ab-new at 61bcc52, 8d33059 with the patch's autotune/decision/verdict.py and
# autotune/online/policy.py; that commit was not kept: the rule was not landed). Run as:
# ./run.sh (run.log).
OUT=${OUT:-/work/main/results/bench/online-45/ab-futility} \
  WORKLOADS=${WORKLOADS:-deep-storage heavy-tail} \
  exec "$(dirname "$0")/../ab.sh"
