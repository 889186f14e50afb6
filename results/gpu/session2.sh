#!/bin/bash
# GPU session, call 2: where a 60 s demo tuning's time goes, a direct grid of the demo on this
# GPU, a 150 s tuning and its verification.
set -u
N=2; source results/gpu/lib.sh
step diag 60
timeout 150 python3 results/gpu/diag.py tune --device cuda --results-dir /tmp/res/b60 >>$LOG 2>&1
RUN=$(ls -d /tmp/res/b60/runs/* | head -1)
step independent grid
timeout 150 python3 results/gpu/independent.py $RUN/recipe.json --seconds 6 --settle 4 --rounds 1 --json /tmp/res/grid-demo.json \
  --labels "w4 pf2 pin nb;w8 pf2 pin nb;w12 pf2 pin nb cl;w15 pf2 pin nb cl;w15 pf4 pin nb cl stream;w15 pf2 cl" >>$LOG 2>&1
step diag 150
timeout 200 python3 results/gpu/diag.py tune --device cuda --budget 150 --results-dir /tmp/res/b150 >>$LOG 2>&1
RUN=$(ls -d /tmp/res/b150/runs/* | head -1)
step verify
timeout 90 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step done
