#!/bin/bash
# GPU session of 2026-11-26 on an H100, second call (after session11.sh): the tests marked gpu; the
# demo tuned with the default 60 s budget; its recorded figure against `autotune verify` and the
# independent loop (independent.py). Session 9 ran the same on an H200 (record -18.6% vs verify).
set -u
N=12; source results/gpu/lib.sh
step env
{ nvidia-smi -L; python3 -c "import torch,torchvision,optuna,pydantic;print(torch.__version__,torchvision.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; } >>$LOG 2>&1
step gpu tests
timeout 40 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_transfer.py tests/test_gpu_online.py >>$LOG 2>&1
step tune demo, default budget
timeout 110 python3 -m autotune tune --device cuda --results-dir /tmp/res/demo >>$LOG 2>&1
RUN=$(ls -d /tmp/res/demo/runs/* | head -1)
cp $RUN/report.md $OUT/demo-report.md 2>/dev/null; cp $RUN/recipe.json $OUT/demo-recipe.json 2>/dev/null
step verify
timeout 70 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step independent
timeout 55 python3 results/gpu/independent.py $RUN/recipe.json --seconds 6 --settle 3 --rounds 1 --json $OUT/independent-demo.json >>$LOG 2>&1
step done
