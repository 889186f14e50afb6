#!/bin/bash
# GPU session, call 1: the gpu-marked tests, a demo tuning with --trace, verify, the independent
# loop and overhead. Run from the repo root on the device machine; everything lands in $OUT.
set -u
N=1; source results/gpu/lib.sh
step env
{ nvidia-smi; python3 -c "import torch,torchvision,optuna,pydantic;print(torch.__version__,torchvision.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; free -g; } >>$LOG 2>&1
step gpu tests
timeout 120 python3 -m pytest -q -m gpu tests/test_gpu.py tests/test_transfer.py -p no:cacheprovider >>$LOG 2>&1
step tune demo --trace
timeout 200 python3 -m autotune tune --device cuda --trace --results-dir /tmp/res >>$LOG 2>&1
RUN=$(ls -d /tmp/res/runs/* | head -1)
step verify $RUN
timeout 120 python3 -m autotune verify $RUN --seconds 10 --rounds 2 --device cuda >>$LOG 2>&1
step independent
timeout 200 python3 results/gpu/independent.py $RUN/recipe.json --seconds 8 --settle 4 --rounds 2 --json /tmp/res/independent-demo.json >>$LOG 2>&1
step overhead
timeout 100 python3 -m autotune overhead demo --device cuda --pairs 8 --results-dir /tmp/res >>$LOG 2>&1
step done
