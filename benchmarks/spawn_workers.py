"""What `autotune run` adds to a loader whose workers are spawned (macOS's and Windows' default
start method, and any script that asks for it): every spawned worker is a fresh interpreter that
re-imports the script, and torch with it, so autotune's boot runs in each. A loader of 4 spawned
workers, 3 epochs (each epoch starts its workers anew), tiny items: the time is the workers'
start-up. Variants alternated, the order reversed every other round:

- P: plain Python;
- K: the same under autotune's boot with every knob fixed (the options `autotune run` passes);
- O: K with an older checkout's autotune (its boot folder and package first on PYTHONPATH),
  where a checkout is given.

Run from the repository root: python benchmarks/spawn_workers.py [ROUNDS] [OLD_CHECKOUT]"""

import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from autotune.cli.run_cmd import child_environment
from autotune.online.options import TUNED, OnlineOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import alternated, checkout_line, run_python  # noqa: E402
from benchmarks.torchrun_cost import stamp  # noqa: E402
from benchmarks.torchrun_twice import OUT, ROOT  # noqa: E402

SCRIPT = """
import time, torch
from torch.utils.data import DataLoader, Dataset

class Items(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.zeros(8)

if __name__ == "__main__":
    loader = DataLoader(Items(), batch_size=8, num_workers=4, multiprocessing_context="spawn")
    t0 = time.perf_counter()
    for epoch in range(3):
        for batch in loader:
            pass
    print(f"EPOCHS {time.perf_counter() - t0:.3f}")
"""


def environments(tmp: Path, old: Path | None) -> dict[str, dict[str, str]]:
    options = OnlineOptions(fixed=TUNED, memory=False, results_dir=tmp / "results")
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    envs = {"P": plain, "K": child_environment(options, plain)}
    if old is not None:
        boot = os.pathsep.join([str(old / "autotune/online/boot"), str(old)])
        envs["O"] = {**envs["K"], "PYTHONPATH": boot}
    return envs


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    old = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else None
    out = [stamp("spawn_workers.py", rounds)]
    if old is not None:
        out.append(checkout_line(old))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        script = tmp / "spawned.py"
        script.write_text(SCRIPT)
        envs = environments(tmp, old)
        times: dict[str, list[float]] = {k: [] for k in envs}
        for k in alternated(list(envs), rounds):
            done = run_python(script, [], envs[k], ROOT)
            found = re.search(r"^EPOCHS ([\d.]+)", done.stdout, re.M)
            if done.returncode != 0 or found is None:
                sys.exit(f"{k} failed (exit {done.returncode}): {done.stderr[-2000:]}")
            times[k].append(float(found.group(1)))
    out.append("3 epochs of a loader with 4 spawned workers, tiny items")
    for k, v in times.items():
        out.append(f"{k}: median {statistics.median(v):.3f}s ({', '.join(f'{t:.2f}' for t in v)})")
    median = {k: statistics.median(v) for k, v in times.items()}
    out += [f"P / {k}: {median['P'] / median[k]:.3f}" for k in median if k != "P"]
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out))
    (OUT / "spawn_workers.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
