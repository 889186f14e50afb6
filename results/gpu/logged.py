"""Run a training script with autotune's logger shown and every output line stamped with the
seconds since start, optionally under cProfile (main thread), to see where a run's time goes.

    python3 results/gpu/logged.py [--prof FILE] SCRIPT ARGS...
"""

import cProfile
import faulthandler
import logging
import os
import runpy
import sys
import time

T0 = time.perf_counter()


# $LOGGED_DUMP_ON="TEXT:N": once TEXT has been written N times, every thread's stack is dumped
# every 2 s (faulthandler, no ptrace needed) and $LOGGED_DUMP_ON's trigger file names this pid,
# for a watcher to py-spy the process tree: where a run's time goes after its last line.
DUMP_ON = os.environ.get("LOGGED_DUMP_ON", "")
DUMP_TEXT, _, DUMP_COUNT = DUMP_ON.rpartition(":")
TRIGGER = os.environ.get("LOGGED_TRIGGER", "/tmp/logged.trigger")


class Stamped:
    seen = 0

    def __init__(self, stream):
        self.stream, self.fresh = stream, True

    def write(self, text):
        if DUMP_TEXT and DUMP_TEXT in text:
            Stamped.seen += 1
            if Stamped.seen == int(DUMP_COUNT):
                faulthandler.dump_traceback_later(2, repeat=True, file=sys.__stderr__)
                with open(TRIGGER, "w") as f:
                    f.write(str(os.getpid()))
        for part in text.splitlines(keepends=True):
            if self.fresh:
                self.stream.write(f"[{time.perf_counter() - T0:7.2f}] ")
            self.stream.write(part)
            self.fresh = part.endswith("\n")
        return len(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


sys.stdout, sys.stderr = Stamped(sys.stdout), Stamped(sys.stderr)
logging.basicConfig(format="autotune log %(levelname)s %(name)s: %(message)s")
logging.getLogger("autotune").setLevel(logging.DEBUG)
args = sys.argv[1:]
prof = None
if args[:1] == ["--prof"]:
    prof, args = args[1], args[2:]
sys.argv = args
sys.path.insert(0, str(__import__("pathlib").Path(args[0]).resolve().parent))
if prof:
    profiler = cProfile.Profile()
    try:
        profiler.runcall(runpy.run_path, args[0], run_name="__main__")
    finally:
        profiler.dump_stats(prof)
else:
    runpy.run_path(args[0], run_name="__main__")
print(f"script returned after {time.perf_counter() - T0:.2f}s")
