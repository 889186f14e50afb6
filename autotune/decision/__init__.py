"""The one decision core that the offline search and the online policy share, as tf.data's model
serves both its analysis and its tuning: one set of thresholds (thresholds.py), one way to
average a configuration's rate and judge a difference against the noise (rate.py), one set of
verdicts (verdict.py: ties, the noise, the winner's curse, persistence), one cost order (cost.py),
one worker range with one top (worker_range.py), one check that a remembered rate still holds
(drift.py), one epoch model (epoch_time.py: a steady rate
and a restart, so that worker counts are compared at one persistence setting) and the prefetch
depth a pool is first measured at (prefetch.py). The two callers
differ only in what they measure: bursts offline, windows of the loop's own steps online."""
