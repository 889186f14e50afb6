#!/bin/bash
# GPU session of 2026-11-27 (evening), call 2 of issue 46: why `autotune run` took 38.7 s where
# the same imagenet main.py with its own -j 4 took 15.4 s, and timm's exploring cost 11.2 s
# (call 1): both scripts once under `autotune run` and once plain, every line stamped, autotune's
# log shown and the main thread profiled; then whether w8's fluctuating rate (3 s windows of a
# plain loop scattering 8.1% in call 1, against 1.7% at w16) is the workers' placement: a traced
# plain loop at w8, unpinned and with each worker on a core of its own.
set -u
N=18; source results/gpu/lib.sh
R=$PWD; D=/tmp/res/diag; mkdir -p $D
trap 'tar czf $OUT/diag18.tgz -C /tmp/res diag 2>/dev/null' EXIT
step env
{ lscpu | head -20; for c in 0 1 8 15; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"; done; git log -1 --format=%h; } >>$LOG 2>&1
step data
python3 -c "
from pathlib import Path; from autotune.workload.jpegs import make_jpeg_folder
make_jpeg_folder(Path('/tmp/jpegs/train'), images=2560, classes=8, seed=0, min_side=160, max_side=320)
make_jpeg_folder(Path('/tmp/jpegs/val'), images=256, classes=8, seed=1, min_side=160, max_side=320)" >>$LOG 2>&1
IMAGENET="$R/tests/third_party/pytorch_imagenet/main.py /tmp/jpegs -a resnet50 --epochs 2 -b 64 -j 4 -p 10"
TIMM="$R/tests/third_party/timm_train/train.py --data-dir /tmp/jpegs --train-split train --val-split val --num-classes 8 --model resnet50 --epochs 2 --warmup-epochs 0 -b 64 -j 4 --amp --log-interval 10 --output /tmp/timm-out"
mkdir -p /tmp/w1 /tmp/w2 /tmp/w3 /tmp/w4
step imagenet under autotune run
(cd /tmp/w1 && timeout 75 python3 -m autotune run --results-dir $D/ia --epochs 2 -- python3 $R/results/gpu/logged.py --prof $D/imagenet-autotune.prof $IMAGENET > $D/imagenet-autotune.log 2>&1); echo "rc=$?" >>$LOG
step imagenet plain
(cd /tmp/w2 && timeout 45 python3 $R/results/gpu/logged.py $IMAGENET > $D/imagenet-user.log 2>&1); echo "rc=$?" >>$LOG
step timm under autotune run
(cd /tmp/w3 && timeout 60 python3 -m autotune run --results-dir $D/ta --epochs 2 -- python3 $R/results/gpu/logged.py --prof $D/timm-autotune.prof $TIMM > $D/timm-autotune.log 2>&1); echo "rc=$?" >>$LOG
step timm plain
(cd /tmp/w4 && timeout 45 python3 $R/results/gpu/logged.py $TIMM > $D/timm-user.log 2>&1); echo "rc=$?" >>$LOG
step trace w8 unpinned
timeout 50 python3 results/gpu/burst_trace.py --out $D/free --configs 'w8 pf2 pin persist nb cl' --rounds 1 --seconds 12 >>$LOG 2>&1
step trace w8 pinned
timeout 50 python3 results/gpu/burst_trace.py --out $D/pinned --configs 'w8 pf2 pin persist nb cl' --rounds 1 --seconds 12 --pin-workers >>$LOG 2>&1
step done
