#!/bin/bash
# GPU session of 2026-11-27 (night), call 2: the fix of call 1's finding (a pinned persistent pool
# still alive at exit, joined by torch 2.11's atexit with a 5 s timeout per worker): the
# gpu-marked test of it, then imagenet's main.py end to end, `autotune run` and plain `-j 4`
# alternated over 2 rounds, each timed whole from start to exit.
set -u
N=20; source results/gpu/lib.sh
R=$PWD; D=/tmp/res/e2e; mkdir -p $D
step env
{ nvidia-smi -L; git log -1 --format=%h 2>/dev/null; } >>$LOG 2>&1
step gpu test
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu -rA tests/test_online_pool_exit.py >>$LOG 2>&1
step data
python3 -c "
from pathlib import Path; from autotune.workload.jpegs import make_jpeg_folder
make_jpeg_folder(Path('/tmp/jpegs/train'), images=2560, classes=8, seed=0, min_side=160, max_side=320)
make_jpeg_folder(Path('/tmp/jpegs/val'), images=256, classes=8, seed=1, min_side=160, max_side=320)" >>$LOG 2>&1
IMAGENET="$R/tests/third_party/pytorch_imagenet/main.py /tmp/jpegs -a resnet50 --epochs 2 -b 64 -j 4 -p 100000"
for round in 1 2; do
  for variant in autotune plain; do
    W=/tmp/w-$variant-$round; mkdir -p $W
    step "round $round $variant"
    if [ $variant = autotune ]; then
      CMD="python3 -m autotune run --results-dir $D/r$round --epochs 2 -- python3 $IMAGENET"
    else
      CMD="python3 $IMAGENET"
    fi
    T0=$(date +%s.%N)
    (cd $W && AUTOTUNE_MEMORY=$W/memory timeout 80 $CMD > $D/$variant-$round.log 2>&1); rc=$?
    T1=$(date +%s.%N)
    echo "imagenet $variant round $round rc=$rc wall $(python3 -c "print(round($T1-$T0,2))") s" | tee -a $LOG
    grep -h "chose" $D/$variant-$round.log | head -1 >>$LOG
  done
done
step done
