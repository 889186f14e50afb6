#!/bin/bash
# GPU session of 2026-11-23, call 2, after the online window and worker-prediction fixes: call 1's
# steps again (the tests marked gpu, the plain script under `autotune run`, now for 6 epochs, and
# the online demo).
N=6 EPOCHS=6 bash results/gpu/session5.sh
