#!/bin/bash
# GPU session of 2026-11-26, call 2: session9's recorded figure read 18.6% under `autotune verify`.
# Is a burst biased against a plain loop on the GPU? Bursts and steady windows of the same
# configuration alternate (bench --accuracy); then what autotune's instrumentation costs
# (overhead, ABBA segments on one loader) at the tuned worker count.
set -u
N=10; source results/gpu/lib.sh
step accuracy
timeout 200 python3 -m autotune bench --accuracy --workloads demo --device cuda --configs 'w14 pf2 pin nb cl,w14 pf2 pin persist nb cl' --rounds 3 --steady-seconds 8 --out /tmp/res/acc >>$LOG 2>&1
cp /tmp/res/acc/accuracy.md $OUT/ 2>/dev/null
step overhead
timeout 110 python3 -m autotune overhead demo --device cuda --num-workers 14 --prefetch-factor 2 --pairs 16 --results-dir /tmp/res >>$LOG 2>&1
step done
