"""`python -m autotune`: the command line, runnable with a given interpreter (Slurm batch
scripts)."""

from autotune.cli.entry import main

main()
