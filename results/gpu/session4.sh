#!/bin/bash
# GPU session, call 4 (after the fixes): the demo with the default 60 s budget on a cold GPU, with
# --trace; verify; each transfer knob flipped alone at the tuned point; an imagefolder tuning.
set -u
N=4; source results/gpu/lib.sh
step tune demo, default budget, --trace
timeout 150 python3 results/gpu/diag.py tune --device cuda --trace --results-dir /tmp/res/demo >>$LOG 2>&1
RUN=$(ls -d /tmp/res/demo/runs/* | head -1)
step verify
timeout 70 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step independent ablations
timeout 100 python3 results/gpu/independent.py $RUN/recipe.json --seconds 6 --settle 4 --rounds 1 --json /tmp/res/ablations-demo.json >>$LOG 2>&1
step imagefolder
python3 -c "
from pathlib import Path; from autotune.workload.jpegs import make_jpeg_folder
make_jpeg_folder(Path('/tmp/if'), images=600, classes=10, seed=7, min_side=500, max_side=1000)" >>$LOG 2>&1
timeout 110 python3 -m autotune tune imagefolder:/tmp/if --device cuda --model resnet18 --batch-size 128 --results-dir /tmp/res/if >>$LOG 2>&1
step done
