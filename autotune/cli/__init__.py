"""The `autotune` command line."""
