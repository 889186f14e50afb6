"""Every threshold a decision reads, offline and online alike."""

from __future__ import annotations

# Noise: a difference below TOLERANCE_FLOOR is never worth more workers, however precise the
# measurements; Z standard errors of a difference still count as "within noise"; measuring goes
# on until that band is down to TARGET, the most throughput a cheaper pick may give up.
TOLERANCE_FLOOR = 0.01
TARGET = 0.02
Z = 2.0

# A piece (burst or window) is a stall where it lies below STALL_SHARE of its configuration's
# median piece (among STALL_PIECES or more), or, among STALL_SPREAD_PIECES or more, further below
# that median than STALL_MADS median absolute deviations (each at least TOLERANCE_FLOOR of it).
# The pauses it is for are full garbage collections of about 100 ms: the main process's at
# num_workers=0, a worker's (over the heap it inherited) above it, since gc.freeze() in each
# worker removes those (results/bench/gc-pauses). One in tens of in-memory's 0.1 s windows
# catches one and reads 0.14-0.5 of the median, while the configuration's other windows scatter
# by a few percent: the spread clause. A configuration's own slow windows (convoys behind
# straggling items) read down to 0.45 of the median on heavy-tail, where the windows scatter by
# 20-30% and stay counted; the share clause alone at half the median coincided there with rounds
# that chose too few workers (results/bench/online-45/stall). Of two pieces, which one stalled
# cannot be told; fewer than five tell too little of a spread.
STALL_SHARE = 0.3
STALL_PIECES = 3
STALL_MADS = 5.0
STALL_SPREAD_PIECES = 5

# The recorded figure's promise: within this share of a long plain-loop measurement of the same
# configuration (`autotune verify`). A figure whose error at the measured noise is wider says so.
RECORDED_WITHIN = 0.05
# Four full-window bursts (16 s at the default 4 s window) take a quarter of the default budget;
# past that, the figure's error is the machine's drift between minutes, which no more bursts of
# the same minute can remove.
MAX_RECORD_BURSTS = 4

# A step that waits on the loader this share of its time or more is still starved: more workers
# or a deeper prefetch may feed it. Below it, the wait is the hand-over of a ready batch.
WAITS_SHARE = 0.05

# An epoch restart below this share of an epoch, or a measured difference below it, is within
# the noise: persistent_workers is then said not to matter.
MATTERS_SHARE = 0.02

# The worker range (worker_range.py). Past HARD_LIMIT, worker processes cost more in memory,
# file handles and scheduling than one more outstanding read gains, whatever the storage.
HARD_LIMIT = 64
GROWTH = 1.5  # the next top, as a multiple of the current one
TOP_SHARE = 0.25  # the best within this top share of the range counts as at the top
# A rate this far from another is beyond one measurement's noise on a busy small machine: a larger
# pool this much below the best says the rate has peaked; the best this much above
# the previous top's says it was still rising there.
FALLEN = 0.05
