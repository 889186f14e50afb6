#!/bin/bash
# Third call, same warm H200: session14 found bursts low at w8 too (0.908, both pairs), where the
# workers leave half the cores free. At w8, whose windows scatter least, which burst setting holds
# it: a trial's, a long window (up to 10 s), or a late one (after 100 warm-up steps)?
set -u
N=15; source results/gpu/lib.sh
for s in "trial:" "long:--burst max_seconds=10" "late:--burst warmup_steps=100"; do
  name=${s%%:*}; opt=${s#*:}
  step "accuracy $name"
  timeout 75 python3 -m autotune bench --accuracy --workloads demo --device cuda --configs 'w8 pf2 pin persist nb cl' --rounds 2 --steady-seconds 6 $opt --out /tmp/res/acc-$name >>$LOG 2>&1
  cp /tmp/res/acc-$name/accuracy.json $OUT/accuracy-$name.json 2>/dev/null
done
step done
