#!/bin/bash
# The simulated short-epochs from w2 pf2 at four run lengths, on the new code (this checkout)
# and the old (a checkout of the commit before the resume, $1, default /tmp/old-wt), one after
# the other: `bash results/bench/online-resume/run.sh [OLD_CHECKOUT]`. Simulated, deterministic.
set -e
here=$(cd "$(dirname "$0")" && pwd)
old=${1:-/tmp/old-wt}
new=$(cd "$here/../../.." && pwd)
for steps in 3000 6000 12000 24000; do
  for side in new old; do
    tree=$new; [ "$side" = old ] && tree=$old
    (cd "$tree" && python benchmarks/climb_sim.py short-epochs --start "w2 pf2" --seeds 1 \
      --steps "$steps" --out "$here/$side-$steps")
  done
done
