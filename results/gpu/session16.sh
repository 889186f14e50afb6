#!/bin/bash
# GPU session of 2026-11-27, one call on the final code of issue 25: every test marked gpu (the
# third-party scripts now skip through conftest's mark alone, 08301d8), then bursts against plain
# loops on the demo with `bench --accuracy` alternating which comes first (d36b8d1), so the drift
# between minutes seen on the H200 weighs on bursts and windows alike.
set -u
N=16; source results/gpu/lib.sh
step env
{ nvidia-smi -L; python3 -c "import torch,torchvision,timm,optuna,pydantic;print(torch.__version__,torchvision.__version__,timm.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; git log -1 --format=%h 2>/dev/null; } >>$LOG 2>&1
step gpu tests
timeout 260 python3 -m pytest -q -p no:cacheprovider -m gpu -rA --timeout 150 --junitxml=$OUT/gpu-tests.xml tests/ >>$LOG 2>&1
step accuracy alternating
timeout 150 python3 -m autotune bench --accuracy --workloads demo --device cuda --configs 'w8 pf2 pin persist nb cl,w16 pf2 pin persist nb cl' --rounds 4 --steady-seconds 6 --out /tmp/res/acc >>$LOG 2>&1
cp /tmp/res/acc/accuracy.json /tmp/res/acc/accuracy.md $OUT/ 2>/dev/null
step done
