#!/bin/bash
# One call of at most 9.5 minutes (run 2026-11-26 on an H100: see 2026-11-26-h100.md). On an H200 the
# tuner's trial bursts read 0.875 of a plain loop's steady windows and the demo's record -18.6%
# (2026-11-26-h200.md); the instrumentation explains about 3 points. Which burst setting holds the
# rest? Same configuration, bursts against steady windows, alternating, four ways: a trial's
# bursts; the record's (window to its longest); 10 s windows (the short windows' scatter); a late
# window (100 warm-up steps: the pool start). Then the online pin change (7503826) on the demo.
set -u
N=11; source results/gpu/lib.sh
C='w14 pf2 pin nb cl'
acc() {  # name, then bench options
  local name=$1; shift
  step "accuracy $name"
  timeout 100 python3 -m autotune bench --accuracy --workloads demo --device cuda --configs "$C" --rounds 3 --steady-seconds 8 --out /tmp/res/acc-$name "$@" >>$LOG 2>&1
  cp /tmp/res/acc-$name/accuracy.json $OUT/accuracy-$name.json 2>/dev/null
}
step env
{ nvidia-smi -L; python3 -c "import torch,optuna,pydantic;print(torch.__version__,optuna.__version__,pydantic.__version__,torch.cuda.get_device_name(0))"; nproc; } >>$LOG 2>&1
acc trials
acc record --full-window
acc long --burst max_seconds=10
acc late --burst warmup_steps=100
step online demo
timeout 150 python3 results/gpu/online.py --steps 1000 --defaults-steps 0 --json $OUT/online-demo.json >>$LOG 2>&1
step done
