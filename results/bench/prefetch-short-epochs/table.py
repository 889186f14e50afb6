"""ab5bd00 against the code before it (fc7829b), side by side: python
results/bench/prefetch-short-epochs/table.py, from the repository root (../online-45/ab_table.py)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "online-45")]
from ab_table import main  # noqa: E402

if __name__ == "__main__":
    main(HERE, "fc7829b", "ab5bd00")
