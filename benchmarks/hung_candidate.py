"""What a tuned configuration whose worker hangs costs the training loop. The online loader gives
its candidates a timeout (`candidate_timeout_s`); where it expires, the pool is replaced and its
batches replayed on another configuration. The loop pays the wait for the timeout and the old
pool's teardown. 3 epochs of 64 items (1 ms each, batch 2), tuned over 0-2 workers, where the
second worker of any pool sleeps for 30 s on its first item. Variants alternated, the order
reversed every other round, for each timeout:

- N: this checkout;
- O: an older checkout (its package first on PYTHONPATH), where one is given.

Run from the repository root: python benchmarks/hung_candidate.py [ROUNDS] [OLD_CHECKOUT]"""

import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root
from benchmarks.alternate import alternated, checkout_line, run_python  # noqa: E402
from benchmarks.torchrun_cost import stamp  # noqa: E402
from benchmarks.torchrun_twice import ROOT  # noqa: E402

OUT = ROOT / "results" / "bench" / "failures"
TIMEOUTS_S = (1.0, 10.0)

SCRIPT = """
import sys, time, torch
import autotune

class Hangs(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id >= 1:
            time.sleep(30)
        time.sleep(0.001)
        return i

online = {
    "window_steps": 2, "window_s": 0.0, "warmup_steps": 0, "max_explore_share": 1.0,
    "max_workers": 2, "max_windows": 2, "fixed": ["prefetch_factor"], "max_explore_steps": 64,
    "candidate_timeout_s": float(sys.argv[1]), "results_dir": None, "memory": False,
}
loader = autotune.DataLoader(Hangs(), batch_size=2, shuffle=True, online=online)
t0 = time.perf_counter()
steps = sum(1 for _ in range(3) for _ in loader)
failed = sorted(loader.tuner_state.failed)
print(f"LOOP {time.perf_counter() - t0:.3f} STEPS {steps} FAILED {failed}")
"""


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    old = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else None
    out = [stamp("hung_candidate.py", rounds, *([old] if old else []))]
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    envs = {"N": {**plain, "PYTHONPATH": str(ROOT)}}
    if old is not None:
        out.append(checkout_line(old))
        envs["O"] = {**plain, "PYTHONPATH": str(old)}
    out.append("3 epochs of 64 items, batch 2, tuned over 0-2 workers; a pool's 2nd worker hangs")
    with tempfile.TemporaryDirectory() as name:
        script = Path(name) / "hung.py"
        script.write_text(SCRIPT)
        for timeout in TIMEOUTS_S:
            times: dict[str, list[float]] = {k: [] for k in envs}
            for k in alternated(list(envs), rounds):
                done = run_python(script, [str(timeout)], envs[k], Path(name))
                found = re.search(r"^LOOP ([\d.]+) STEPS (\d+) FAILED (.*)$", done.stdout, re.M)
                if done.returncode != 0 or found is None or found.group(2) != "96":
                    sys.exit(f"{k} failed (exit {done.returncode}): {done.stderr[-2000:]}")
                if "w2" not in found.group(3):
                    sys.exit(f"{k}: no pool of 2 workers failed ({found.group(3)})")
                times[k].append(float(found.group(1)))
            for k, v in times.items():
                out.append(
                    f"candidate_timeout_s={timeout:g} {k}: loop median {statistics.median(v):.2f}s"
                    f" ({', '.join(f'{t:.2f}' for t in v)})"
                )
    out.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(out))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hung_candidate.out").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
