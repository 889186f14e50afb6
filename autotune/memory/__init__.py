"""What tuning learned for a workload on a machine, kept between runs: one file per (workload,
machine) key in the user's cache, read by the next run of the same script (online) and written by
online runs and `autotune tune`."""

# $AUTOTUNE_MEMORY or --memory values that turn it off. Here, not in store.py: `autotune run`
# validates its options with it before the script starts, without the store's models.
OFF = ("off", "0", "false", "no", "none")
