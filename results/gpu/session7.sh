#!/bin/bash
# GPU session of 2026-11-23, call 3: the online demo's pin_memory verdict against an independent
# loop (its choice with and without pinning, and the ideal), why the plain example kept
# num_workers=0, the gpu tests once more (the pin test fixed), and the Lightning and transformers
# scripts under `autotune run` on the GPU.
set -u
N=7; source results/gpu/lib.sh
step independent: the online choices against the ideal
timeout 240 python3 results/gpu/independent.py recipes/example-demo-h100.json --seconds 6 --settle 3 --rounds 3 --labels "w14 pf2 persist;w14 pf2 pin persist;w16 pf2 pin" --json $OUT/pin-check.json >>$LOG 2>&1
step plain diag
timeout 90 python3 results/gpu/plain_diag.py >>$LOG 2>&1
step gpu tests
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_online.py >>$LOG 2>&1
step frameworks under autotune run
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -s tests/test_online_frameworks.py >>$LOG 2>&1
step done
