#!/bin/bash
# GPU session of 2026-11-23, call 1: the tests marked gpu (the online loader's two new), a plain
# script under `autotune run` on CUDA, and online tuning of the demo against the grid's best.
set -u
N=${N:-5}; EPOCHS=${EPOCHS:-2}; source results/gpu/lib.sh  # call 2 ran it as session6.sh
step device; nvidia-smi -L >>$LOG 2>&1; nproc >>$LOG
step gpu tests
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_transfer.py tests/test_gpu_online.py >>$LOG 2>&1
step autotune run examples/train_plain.py
timeout 120 python3 -m autotune run --results-dir /tmp/res/plain examples/train_plain.py --epochs $EPOCHS >>$LOG 2>&1
cp /tmp/res/plain/runs/*/report.md $OUT/plain-report.md 2>/dev/null
step online demo
timeout 420 python3 results/gpu/online.py --steps 3000 --defaults-steps 150 --json $OUT/online-demo.json >>$LOG 2>&1
step done
