"""Real training scripts, unmodified, timed end to end: under `autotune run` (exploring included),
with the script's own `-j` (the user's setting), and with PyTorch's DataLoader default
(`num_workers=0`). Variants alternate within each round, their order rotating from round to round,
so a machine drifting between minutes weighs on all of them alike; each run is a fresh process
in a fresh working folder, timed from its start to its exit.

    python3 results/gpu/script_speed.py --out DIR [--rounds 3] [--images 2560] [--epochs 2] \
        [--once defaults]

Scripts: pytorch/examples imagenet/main.py (ResNet-50, its own pin_memory and non_blocking
copies) and timm's train.py (ResNet-50 with --amp, its own side-stream prefetcher), both from
tests/third_party/, on a generated ImageFolder of JPEGs. Writes DIR/script_speed.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from autotune.workload.jpegs import make_jpeg_folder  # noqa: E402

THIRD = ROOT / "tests" / "third_party"
USER_WORKERS = 4  # both scripts' own default -j


def script_args(script: str, data: Path, workers: int, epochs: int, batch: int, out: Path) -> list[str]:
    if script == "imagenet":
        return [str(THIRD / "pytorch_imagenet" / "main.py"), str(data), "-a", "resnet50",
                "--epochs", str(epochs), "-b", str(batch), "-j", str(workers), "-p", "100000"]
    return [str(THIRD / "timm_train" / "train.py"), "--data-dir", str(data), "--train-split",
            "train", "--val-split", "val", "--num-classes", "8", "--model", "resnet50",
            "--epochs", str(epochs), "--warmup-epochs", "0", "-b", str(batch), "-j", str(workers),
            "--amp", "--log-interval", "100000", "--output", str(out)]


def command(script: str, variant: str, data: Path, epochs: int, batch: int, work: Path) -> list[str]:
    workers = 0 if variant == "defaults" else USER_WORKERS
    args = script_args(script, data, workers, epochs, batch, work / "out")
    if variant == "autotune":
        return [sys.executable, "-m", "autotune", "run", "--results-dir", str(work / "results"),
                "--epochs", str(epochs), "--", sys.executable, *args]
    return [sys.executable, *args]


def chosen(work: Path) -> list[str]:
    """The training loaders' choices, from the recipes `autotune run` left."""
    out = []
    for recipe in sorted((work / "results").rglob("recipe.json")):
        data = json.loads(recipe.read_text())
        dl = data.get("dataloader", {})
        m = data.get("measured") or {}
        out.append(f"{data.get('workload', {}).get('name')}: w{dl.get('num_workers')}"
                   f" pf{dl.get('prefetch_factor')} pin={dl.get('pin_memory')}"
                   f" persist={dl.get('persistent_workers')}; explored {m.get('exploration_steps')}"
                   f" steps, cost {m.get('exploration_cost_s')} s, {m.get('exploration_stop')};"
                   f" {m.get('samples_per_s')} samples/s, x{m.get('speedup')}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--images", type=int, default=2560)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--scripts", default="imagenet,timm")
    ap.add_argument("--variants", default="autotune,user,defaults")
    ap.add_argument("--once", default="", help="variants run in the first round only (the slowest)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--first-round", type=int, default=1, help="go on from this round (1-based)")
    ap.add_argument("--render", type=Path, nargs="*", help="print one table from these JSON files")
    opts = ap.parse_args()
    if opts.render:
        reps = [json.loads(f.read_text()) for f in opts.render]
        print(render({**reps[0], "command": " + ".join(r["command"] for r in reps),
                      "runs": [run for r in reps for run in r["runs"]]}))
        return
    opts.out.mkdir(parents=True, exist_ok=True)
    data = Path(tempfile.mkdtemp(prefix="jpegs-"))
    t0 = time.perf_counter()
    make_jpeg_folder(data / "train", images=opts.images, classes=8, seed=0, min_side=160, max_side=320)
    make_jpeg_folder(data / "val", images=max(64, opts.images // 10), classes=8, seed=1,
                     min_side=160, max_side=320)
    print(f"[speed] data made in {time.perf_counter() - t0:.1f}s", flush=True)
    variants = opts.variants.split(",")
    runs = []
    for rnd in range(opts.first_round - 1, opts.rounds):
        these = [v for v in variants if rnd == 0 or v not in opts.once.split(",")]
        order = these[rnd % len(these):] + these[:rnd % len(these)]
        for script in opts.scripts.split(","):
            for variant in order:
                work = Path(tempfile.mkdtemp(prefix=f"{script}-{variant}-"))
                cmd = command(script, variant, data, opts.epochs, opts.batch, work)
                t = time.perf_counter()
                try:
                    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                                          timeout=opts.timeout, env={**os.environ})
                    rc, tail = done.returncode, (done.stdout + done.stderr)[-3000:]
                except subprocess.TimeoutExpired as exc:
                    rc, tail = "timeout", str(exc)[-500:]
                wall = time.perf_counter() - t
                row = {"round": rnd + 1, "script": script, "variant": variant, "wall_s": round(wall, 2),
                       "rc": rc, "choices": chosen(work) if variant == "autotune" else []}
                runs.append(row)
                print(f"[speed] round {rnd + 1} {script} {variant}: {wall:.1f}s rc={rc}"
                      f" {row['choices']}", flush=True)
                if rc != 0:
                    print(tail, flush=True)
                (opts.out / "script_speed.json").write_text(json.dumps(report(opts, runs), indent=2))
    rep = report(opts, runs)
    (opts.out / "script_speed.json").write_text(json.dumps(rep, indent=2))
    (opts.out / "script_speed.md").write_text(render(rep))
    print(render(rep), flush=True)


def report(opts: argparse.Namespace, runs: list[dict]) -> dict:
    import torch

    from autotune import environment
    from benchmarks.provenance import git_commit

    return {"commit": git_commit(), "environment": environment.collect(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": "python3 results/gpu/script_speed.py " + " ".join(sys.argv[1:]),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "cpus": os.cpu_count(), "torch": torch.__version__,
            "images": opts.images, "epochs": opts.epochs, "batch": opts.batch, "runs": runs}


def render(rep: dict) -> str:
    lines = [f"{rep['command']} ({rep['created']}, {rep['gpu']}, {rep['cpus']} CPUs, torch"
             f" {rep['torch']}; {rep['images']} training JPEGs, {rep['epochs']} epochs, batch"
             f" {rep['batch']})", "",
             "| script | variant | runs (s) | median (s) | median / autotune run's |",
             "|---|---|---|---:|---:|"]
    ok = [r for r in rep["runs"] if r["rc"] == 0]
    scripts = sorted({r["script"] for r in rep["runs"]})
    for script in scripts:
        mine = [r["wall_s"] for r in ok if r["script"] == script and r["variant"] == "autotune"]
        base = statistics.median(mine) if mine else None
        for variant in ("autotune", "user", "defaults"):
            walls = [r["wall_s"] for r in ok if r["script"] == script and r["variant"] == variant]
            if not walls:
                continue
            med = statistics.median(walls)
            ratio = f"{med / base:.3f}" if base else "n/a"
            lines.append(f"| {script} | {variant} | {', '.join(f'{w:.1f}' for w in walls)} |"
                         f" {med:.1f} | {ratio} |")
    failed = [r for r in rep["runs"] if r["rc"] != 0]
    if failed:
        lines.append("")
        lines.append(f"Failed runs: {[(r['script'], r['variant'], r['round'], r['rc']) for r in failed]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
