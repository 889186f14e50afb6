#!/bin/bash
# one round of torchrun_twice.py on clone /tmp/ab-$1, output to /tmp/ab48/$1-$2.out
cd /tmp/ab-$1 && PYTHONPATH=/tmp/ab-$1 /work/main/.venv/bin/python benchmarks/torchrun_twice.py 1 > /tmp/ab48/$1-$2.log 2>&1
cp results/bench/repeated-runs/torchrun_twice.out /tmp/ab48/$1-$2.out
echo "$(date -u +%H:%M:%S) $1 $2 done"
