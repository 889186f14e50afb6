"""Online tuning inside the user's own training run: `autotune.DataLoader` (loader.py)."""
