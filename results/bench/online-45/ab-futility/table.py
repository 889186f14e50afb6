"""The futility rule (futility.patch, run as 61bcc52) against the code before it (8d33059), side
by side: python
results/bench/online-45/ab-futility/table.py, from the repository root (ab_table.py)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
from ab_table import main  # noqa: E402

if __name__ == "__main__":
    main(HERE, "8d33059", "futility")
