"""Tuning across a cluster: Slurm array sweeps over one shared study, and merging what their tasks
measured into recipes (Slurm's variables are read by autotune.slurm_env, multi-rank bursts are
burst.ranks, the shared-study ledger is search.ledger)."""
