"""Tuning across a cluster: Slurm's allocation, array sweeps on one shared study, multi-rank bursts."""
