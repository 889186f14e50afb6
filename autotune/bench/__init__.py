"""Benchmarks of autotune itself."""
