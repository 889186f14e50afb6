#!/bin/bash
# GPU session, call 3 (after the per-probe time limit): the demo tuned with the default 60 s and
# with 150 s, the 150 s recipe verified, and an independent grid around it.
set -u
N=3; source results/gpu/lib.sh
step diag 60
timeout 130 python3 results/gpu/diag.py tune --device cuda --results-dir /tmp/res/b60 >>$LOG 2>&1
step diag 150
timeout 200 python3 results/gpu/diag.py tune --device cuda --budget 150 --results-dir /tmp/res/b150 >>$LOG 2>&1
RUN=$(ls -d /tmp/res/b150/runs/* | head -1)
step verify
timeout 75 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step independent grid
timeout 150 python3 results/gpu/independent.py $RUN/recipe.json --seconds 6 --settle 4 --rounds 1 --json /tmp/res/grid-demo.json \
  --labels "w8 pf2 pin nb cl;w12 pf2 pin nb cl;w16 pf2 pin nb cl;w16 pf2 pin nb cl stream;w16 pf2 pin cl;w16 pf2 cl;w16 pf2 pin nb" >>$LOG 2>&1
step done
