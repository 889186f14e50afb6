"""Every threshold a decision reads, offline and online alike."""

from __future__ import annotations

# Noise: a difference below TOLERANCE_FLOOR is never worth more workers, however precise the
# measurements; Z standard errors of a difference still count as "within noise"; measuring goes
# on until that band is down to TARGET, the most throughput a cheaper pick may give up.
TOLERANCE_FLOOR = 0.01
TARGET = 0.02
Z = 2.0

# A piece (burst or window) below STALL_SHARE of its configuration's median piece, among
# STALL_PIECES or more, is a stall: a pause that one piece of a hundred milliseconds caught, not
# the configuration's rate. On in-memory those are full garbage collections of 74-207 ms, the main
# process's at num_workers=0 and each worker's above it, taking 4-6% of the time of every
# configuration measured (results/bench/gc-pauses); a 0.1 s window that catches one reads
# 0.14-0.5 of the median. A configuration's own slow windows (convoys behind a straggling item)
# read down to 0.45 of it on heavy-tail, where leaving out more of the low pieces (below half the
# median, or far outside a tight spread of five or more) coincided with rounds that stopped at too
# few workers (results/bench/online-45/stall, spread). Of two pieces, which one stalled cannot be
# told.
STALL_SHARE = 0.3
STALL_PIECES = 3

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
