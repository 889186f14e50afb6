#!/bin/bash
# GPU session of 2026-11-23, call 4, after the prediction fix (threaded fetch): the plain example
# under `autotune run` again, and pin_memory alternated on a schedule inside the online loader.
set -u
N=8; source results/gpu/lib.sh
step autotune run examples/train_plain.py
timeout 100 python3 -m autotune run --results-dir /tmp/res/plain examples/train_plain.py --epochs 6 >>$LOG 2>&1
step pin diag
PYTHONPATH=$PYTHONPATH:results/gpu timeout 200 python3 results/gpu/pin_diag.py --json $OUT/pin-diag.json >>$LOG 2>&1
step done
