#!/bin/bash
# GPU session of 2026-11-27 (night), call 1: where `autotune run`'s extra time on imagenet's
# main.py goes (results/gpu/2026-11-27-h200-evening.md §3: +4.9 s before the script's first line,
# +20.3 s between its last validation and its return). The start-up: torch's import with and
# without autotune's boot folder on PYTHONPATH, alternated, and -X importtime under it. The 20 s:
# imagenet under `autotune run` with every thread's stack dumped every 2 s from its second
# validation on (logged.py's $LOGGED_DUMP_ON) and the process tree py-spied; then plain, and
# under `autotune run --fix persistent_workers`, to see whether the persistent pool is the cause.
set -u
N=19; source results/gpu/lib.sh
export PATH=/tmp/site/bin:$PATH
R=$PWD; D=/tmp/res/diag; mkdir -p $D
step env
{ nvidia-smi -L; cat /proc/sys/kernel/yama/ptrace_scope; which py-spy; python3 -c "import torch,torchvision;print(torch.__version__,torchvision.__version__)"; nproc; } >>$LOG 2>&1
step data
python3 -c "
from pathlib import Path; from autotune.workload.jpegs import make_jpeg_folder
make_jpeg_folder(Path('/tmp/jpegs/train'), images=2560, classes=8, seed=0, min_side=160, max_side=320)
make_jpeg_folder(Path('/tmp/jpegs/val'), images=256, classes=8, seed=1, min_side=160, max_side=320)" >>$LOG 2>&1
step start-up
BOOT=$R/autotune/online/boot
for i in 1 2 3; do
  python3 -c "import time;t=time.perf_counter();import torch;print('plain import torch', round(time.perf_counter()-t,3))" >>$LOG 2>&1
  PYTHONPATH=$BOOT:$PYTHONPATH python3 -c "import time;t=time.perf_counter();import torch;print('boot import torch', round(time.perf_counter()-t,3))" >>$LOG 2>&1
done
PYTHONPATH=$BOOT:$PYTHONPATH python3 -X importtime -c "import torch" 2>$D/importtime.txt
sort -t'|' -k2 -n $D/importtime.txt | tail -40 >>$LOG
IMAGENET="$R/tests/third_party/pytorch_imagenet/main.py /tmp/jpegs -a resnet50 --epochs 2 -b 64 -j 4 -p 10"
mkdir -p /tmp/w1 /tmp/w2 /tmp/w3
watch() {  # py-spy the trigger's process and its descendants, 6 times, 3 s apart
  while [ ! -f /tmp/logged.trigger ]; do sleep 0.5; done
  P=$(cat /tmp/logged.trigger)
  for k in 1 2 3 4 5 6; do
    for p in $P $(pgrep -P $P) ; do echo "--- py-spy $k pid $p $(date -u +%T.%N)"; timeout 10 py-spy dump --pid $p 2>&1; done
    sleep 3
  done
}
step imagenet under autotune run, stacks after the second validation
rm -f /tmp/logged.trigger; watch >$D/pyspy.txt 2>&1 & W=$!
(cd /tmp/w1 && LOGGED_DUMP_ON=" *   Acc@1:2" /usr/bin/time -f "wall %e" timeout 80 python3 -m autotune run --results-dir $D/ia --epochs 2 -- python3 $R/results/gpu/logged.py $IMAGENET > $D/imagenet-autotune.log 2>&1); echo "rc=$?" >>$LOG
kill $W 2>/dev/null
step imagenet plain
(cd /tmp/w2 && /usr/bin/time -f "wall %e" timeout 45 python3 $R/results/gpu/logged.py $IMAGENET > $D/imagenet-user.log 2>&1); echo "rc=$?" >>$LOG
step imagenet under autotune run, persistent_workers fixed
(cd /tmp/w3 && /usr/bin/time -f "wall %e" timeout 80 python3 -m autotune run --results-dir $D/ib --epochs 2 --fix persistent_workers -- python3 $R/results/gpu/logged.py $IMAGENET > $D/imagenet-fixpersist.log 2>&1); echo "rc=$?" >>$LOG
step done
grep -h "wall\|returned\|chose" $D/*.log >>$LOG
