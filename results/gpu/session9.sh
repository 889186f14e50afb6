#!/bin/bash
# GPU session of 2026-11-26, one call on the final code of issue 25: the tests marked gpu; the demo
# tuned with the default 60 s budget; the recipe's recorded figure against `autotune verify` and
# against the independent loop (independent.py); the online demo against its ideal.
set -u
N=9; source results/gpu/lib.sh
step env
{ nvidia-smi -L; python3 -c "import torch,torchvision,optuna,pydantic;print(torch.__version__,torchvision.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; } >>$LOG 2>&1
step gpu tests
timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_transfer.py tests/test_gpu_online.py >>$LOG 2>&1
step tune demo, default budget
timeout 130 python3 -m autotune tune --device cuda --results-dir /tmp/res/demo >>$LOG 2>&1
RUN=$(ls -d /tmp/res/demo/runs/* | head -1)
cp $RUN/report.md $OUT/demo-report.md 2>/dev/null
step verify
timeout 80 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step independent
timeout 100 python3 results/gpu/independent.py $RUN/recipe.json --seconds 6 --settle 3 --rounds 1 --json /tmp/res/independent-demo.json >>$LOG 2>&1
step online demo
timeout 150 python3 results/gpu/online.py --steps 1000 --defaults-steps 0 --json $OUT/online-demo.json >>$LOG 2>&1
step done
