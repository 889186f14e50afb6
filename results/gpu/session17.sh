#!/bin/bash
# GPU session of 2026-11-27 (evening), call 1 of issue 46: the fast gpu-marked tests (nvJPEG's
# decode alternative among them), the decode alternative's figures on two JPEG folders, a burst's
# scatter traced against plain loops on fresh pools (burst_trace.py), `autotune overhead --pairs
# 32` on the GPU, and the first round of the real scripts timed end to end (script_speed.py).
set -u
N=17; source results/gpu/lib.sh
step env
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; python3 -c "import torch,torchvision,timm,optuna,pydantic;print(torch.__version__,torchvision.__version__,timm.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; git log -1 --format=%h 2>/dev/null; } >>$LOG 2>&1
step gpu tests, fast
timeout 70 python3 -m pytest -q -p no:cacheprovider -m "gpu and not slow" -rA --timeout 60 --junitxml=$OUT/gpu-tests.xml tests/ >>$LOG 2>&1
step decode alternative
timeout 45 python3 - >>$LOG 2>&1 <<'PY'
import torch
from pathlib import Path
from torchvision.datasets import ImageFolder
from autotune.profiling.alternatives import measure_alternatives
from autotune.workload.jpegs import demo_folder, make_jpeg_folder
for name, root in [("demo", demo_folder()),
                   ("400-px", make_jpeg_folder(Path("/tmp/res/jpegs400"), images=64, min_side=300, max_side=500))]:
    for a in measure_alternatives(ImageFolder(str(root)), 64, torch.device("cuda")):
        print(f"[decode] {name}: {a.as_dict()}", flush=True)
PY
step burst trace
timeout 95 python3 results/gpu/burst_trace.py --out /tmp/res/trace --rounds 1 --seconds 12 >>$LOG 2>&1
cp /tmp/res/trace/burst_trace.json $OUT/ 2>/dev/null
step overhead
timeout 60 python3 -m autotune overhead --device cuda --pairs 32 --segment 0.2 --results-dir /tmp/res/ovh >>$LOG 2>&1
cp /tmp/res/ovh/bench/overhead.* $OUT/ 2>/dev/null
step script speed, round 1
timeout 150 python3 results/gpu/script_speed.py --out /tmp/res/speed --rounds 1 --timeout 60 >>$LOG 2>&1
cp /tmp/res/speed/script_speed.* $OUT/ 2>/dev/null
step done
