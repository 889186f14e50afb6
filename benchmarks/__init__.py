"""Benchmarks of autotune itself: `autotune bench` (the tuner against an exhaustive grid, burst
accuracy, the online loader) and `autotune overhead`. This package sits above `autotune` in a
clone of the repository and is not installed with it; `autotune.cli.lab` loads its commands."""
