#!/bin/bash
# Second call of the evening session, on the same warm H200 right after session13.sh: the record
# read 1,249.4 against verify's 1,670.2 and 1,636.0 (-24%), and w0 83.5 against 125.8. Does the
# burst read low only where the workers hold every core? Bursts against 6 s steady windows,
# alternating, at w16 (16 of 16 cores) and w8.
set -u
N=14; source results/gpu/lib.sh
step accuracy w16 and w8
timeout 230 python3 -m autotune bench --accuracy --workloads demo --device cuda --configs 'w16 pf2 pin persist nb cl,w8 pf2 pin persist nb cl' --rounds 2 --steady-seconds 6 --out /tmp/res/acc >>$LOG 2>&1
cp /tmp/res/acc/accuracy.md /tmp/res/acc/accuracy.json $OUT/ 2>/dev/null
step done
