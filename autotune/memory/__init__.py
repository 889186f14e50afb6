"""What tuning learned for a workload on a machine, kept between runs: one file per (workload,
machine) key in the user's cache, read by the next run of the same script (online) and written by
online runs and `autotune tune`."""
