"""Where a tuning's time goes: times every probe, set-up step and trial of `autotune tune ARGS`
(printed as `[diag] +T s  what  took S s`), and prints the traceback of a probe that fails
(the tuner itself records a failed probe only as missing ceilings).

    python results/gpu/diag.py tune --device cuda --budget 150
"""
import functools
import sys
import time
import traceback

T0 = time.perf_counter()


def timed(owner, name, label=None):
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            out = fn(*args, **kwargs)
        except BaseException as exc:
            print(f"[diag] +{t - T0:6.1f}s {label or name} RAISED after {time.perf_counter() - t:.1f}s:"
                  f" {exc!r}", flush=True)
            traceback.print_exc()
            raise
        extra = ""
        if name == "run" and out is not None:  # a trial: its configuration, rate and status
            extra = f" {args[1].label()} -> {getattr(out, 'samples_per_s', None)} {getattr(out, 'status', '')}"
        elif getattr(out, "samples_per_s", None) is not None:
            extra = f" -> {out.samples_per_s:.1f} samples/s"
        print(f"[diag] +{t - T0:6.1f}s {label or name} took {time.perf_counter() - t:.1f}s{extra}", flush=True)
        return out
    setattr(owner, name, wrapper)


import autotune.probe.run as probe_run
import autotune.search.phases as phases
import autotune.search.tuner as tuner
import autotune.search.trial_runner as trial_runner
import autotune.workload.spec as spec
import autotune.cli.tune_cmd as tune_cmd

timed(tuner, "probe_batch")
timed(tuner, "build_space")
timed(tuner, "tuning_study")
timed(tuner.environment, "collect", "environment.collect")
timed(probe_run, "device_ceiling")
timed(probe_run, "probe_loader")
timed(phases, "probe_loader", "probe_loader (at choice)")
timed(phases, "run_probes")
timed(trial_runner.TrialRunner, "run", "trial")
timed(tuner.Tuner, "__init__", "Tuner.__init__")
timed(tuner.Tuner, "_search", "search phase")
timed(tuner, "confirm", "confirm phase")
import autotune.cli.common as common
for mod in (spec, tune_cmd, common):
    if hasattr(mod, "load_workload"):
        timed(mod, "load_workload")

from autotune.cli.app import app
sys.argv = ["autotune"] + sys.argv[1:]
app()
