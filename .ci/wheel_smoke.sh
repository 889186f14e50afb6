#!/usr/bin/env bash
# The package as a user gets it: the sdist and the wheel built by the standard front end, their
# metadata checked, the wheel installed into a clean virtual environment in a folder outside the
# checkout, and from there: the version, the main job on the default workload, the README's Python
# API example, and DataLoader workers started by spawn and by forkserver (a FILE.py:factory
# workload whose Dataset lives in that file, `autotune run` on a script, autotune.DataLoader).
# PYTHON picks the interpreter (default python3). Budgets are short: this checks that each path
# works, not how well it tunes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "== wheel smoke [$((SECONDS))s]: $*"; }

step "build the sdist and the wheel"
"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install -q build twine
"$work/tools/bin/python" -m build --outdir "$work/dist" "$repo"
"$work/tools/bin/twine" check --strict "$work/dist"/*
ls -l "$work/dist"

step "install the wheel into a clean venv outside the checkout"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work/dist"/*.whl
cd "$work"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
python - "$repo" <<'PY'
import sys
from importlib import metadata
import autotune
assert not autotune.__file__.startswith(sys.argv[1]), f"autotune imported from the checkout: {autotune.__file__}"
assert metadata.version("dataloader-autotune") == autotune.__version__
print("autotune from", autotune.__file__)
PY
step "autotune --version"
autotune --version | tee version.txt
grep -q "installed package" version.txt

step "the main job on the default workload"
autotune tune --budget 30 --results-dir results --out recipe.json
autotune show recipe.json > /dev/null
python - <<'PY'
import json
from importlib import metadata
made_by = json.load(open("recipe.json"))["made_by"]
# An installed package: its version, and no commit (no checkout to take one from).
assert made_by == {"version": metadata.version("dataloader-autotune"), "commit": None}, made_by
PY

step "the README's Python API example"
cp "$repo/examples/python_api.py" "$repo/examples/train_plain.py" .
python python_api.py --budget 20

# A user's work.py as on macOS and Windows (spawn) and Python 3.14 on Linux (forkserver):
# the Dataset is defined in the file, the start method set in the factory.
cat > work.py <<'PY'
import os
import time

import torch
from torch.utils.data import Dataset

import autotune


class Waits(Dataset):
    """Items that wait on storage: workers pay."""

    def __len__(self):
        return 1024

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((64,), float(i))


def make():
    torch.multiprocessing.set_start_method(os.environ["START_METHOD"], force=True)
    return autotune.Workload(Waits(), batch_size=32, step=lambda batch: batch.sum())
PY
cat > online.py <<'PY'
import sys

import autotune
from work import Waits

if __name__ == "__main__":
    loader = autotune.DataLoader(Waits(), batch_size=32, num_workers=1,
                                 multiprocessing_context=sys.argv[1], online={"epochs": 2})
    for epoch in range(2):
        for batch in loader:
            batch.sum()
    print("online loader finished with", sys.argv[1])
PY
for method in spawn forkserver; do
    step "autotune tune work.py:make with $method workers"
    START_METHOD=$method autotune tune work.py:make --budget 120 --trials 3 --max-workers 2 --no-stages \
        --results-dir "results-$method"
    # A configuration with workers measured successfully (the search never got to one otherwise:
    # the tuning then fails above, or this check does).
    python - "results-$method" <<'PY'
import csv, pathlib, sys
rows = [r for f in pathlib.Path(sys.argv[1]).glob("runs/*/trials.csv") for r in csv.DictReader(f.open())]
ok = [r for r in rows if int(r["num_workers"]) > 0 and not r["status"].startswith(("failed", "skipped"))]
assert ok, f"no configuration with workers ran: {[(r['num_workers'], r['status']) for r in rows]}"
print(f"{len(ok)} configurations with workers measured")
PY
    step "autotune run on a script with $method workers"
    autotune run --epochs 1 train_plain.py --epochs 1 --items 512 --start-method "$method"
    step "autotune.DataLoader with $method workers"
    python online.py "$method"
done
step "done"
