"""The one decision core that the offline search and the online policy share, as tf.data's model
serves both its analysis and its tuning: one set of thresholds (thresholds.py), one way to
average a configuration's rate and judge a difference against the noise (rate.py), one cost
order (cost.py) and one worker range (worker_range.py). The two callers differ only in what they
measure: bursts offline, windows of the loop's own steps online."""
