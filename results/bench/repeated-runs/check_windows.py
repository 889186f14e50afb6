"""Issue 48: why a second run's check reads below its first run (2-rank torchrun job).
Run 1 under autotune run with a memory; run 2 from a copy with a long check (min_windows=10), so
that its windows over the run's first few hundred steps show whether the early ones read low.
Prints run 1's windows of each configuration and run 2's check windows. From the repository root:
python results/bench/repeated-runs/check_windows.py [ROUNDS] | tee results/bench/repeated-runs/check_windows.out"""
import json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from benchmarks.repeated_runs import under_autotune_run
from benchmarks.torchrun_twice import _torchrun

def entry(folder):
    files = [p for p in Path(folder).rglob("*.json")]
    return [json.loads(p.read_text()) for p in files]

def show(tag, e):
    print(tag, "chosen", e["chosen"]["num_workers"], e["chosen"]["prefetch_factor"], e["chosen"]["persistent_workers"], "runs", e["runs"], flush=True)
    for w in e["measured"]:
        c = w["config"]
        print(f"  w{c['num_workers']} pf{c['prefetch_factor']} persist{int(c['persistent_workers'])}: fresh_from {w['fresh_from']} startup {w['startup_s']} rates(samples/s) {[round(r*8,1) for r in w['rates']]}", flush=True)

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
import datetime
from autotune.made_by import git_commit
print(f"# python results/bench/repeated-runs/check_windows.py {rounds} -- {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {git_commit()}, load average at the start {os.getloadavg()[0]:.1f}", flush=True)
for r in range(rounds):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        d = subprocess.run(under_autotune_run(str(tmp / "m"), str(tmp / "res"), _torchrun()), capture_output=True, text=True, cwd=ROOT)
        print(f"round {r+1} run 1 {time.perf_counter()-t:.2f}s exit {d.returncode}", flush=True)
        for e in entry(tmp / "m"): show("run 1", e)
        shutil.copytree(tmp / "m", tmp / "m2")
        env = {**os.environ, "AUTOTUNE_ONLINE": json.dumps({"min_windows": 10, "max_windows": 12})}
        t = time.perf_counter()
        d = subprocess.run(under_autotune_run(str(tmp / "m2"), str(tmp / "res"), _torchrun()), capture_output=True, text=True, cwd=ROOT, env=env)
        print(f"round {r+1} run 2 (check of 10 windows) {time.perf_counter()-t:.2f}s exit {d.returncode}", flush=True)
        print("\n".join(l for l in d.stdout.splitlines() if l.startswith("autotune.DataLoader")), flush=True)
        for e in entry(tmp / "m2"): show("run 2", e)
