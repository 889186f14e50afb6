#!/bin/bash
# GPU session of 2026-11-26 (evening), one call: every test marked gpu, the third-party scripts
# under `autotune run` on CUDA among them (imagenet main.py with DataParallel and with its own
# mp.spawn DDP path, timm train.py with AMP); then the demo tuned with the default 60 s budget
# and its recorded figure against `autotune verify`, on the final offline code of issue 25.
set -u
N=13; source results/gpu/lib.sh
step env
{ nvidia-smi -L; python3 -c "import torch,torchvision,timm,optuna,pydantic;print(torch.__version__,torchvision.__version__,timm.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; git log -1 --format=%h 2>/dev/null; } >>$LOG 2>&1
step gpu tests
timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu -rA --timeout 150 --junitxml=$OUT/gpu-tests.xml tests/ >>$LOG 2>&1
step tune demo, default budget
timeout 110 python3 -m autotune tune --device cuda --results-dir /tmp/res/demo >>$LOG 2>&1
RUN=$(ls -d /tmp/res/demo/runs/* | head -1)
cp $RUN/report.md $OUT/demo-report.md 2>/dev/null; cp $RUN/recipe.json $OUT/demo-recipe.json 2>/dev/null
step verify
timeout 60 python3 -m autotune verify $RUN --seconds 8 --rounds 2 --device cuda >>$LOG 2>&1
step done
