"""The one decision core that the offline search and the online policy share, as tf.data's model
serves both its analysis and its tuning: one set of thresholds (thresholds.py), one way to
average a configuration's rate and judge a difference against the noise (rate.py), one set of
verdicts (verdict.py: ties, the noise, the winner's curse, persistence), one cost order (cost.py)
and one worker range with one top (worker_range.py). The two callers differ only in what they
measure: bursts offline, windows of the loop's own steps online."""
