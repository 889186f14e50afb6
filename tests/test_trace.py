"""--trace on CPU: a torch.profiler trace file of the tuned configuration, with its cost."""

import json

import torch

from autotune import tune
from autotune.profiling.trace import SCHEDULE, record_trace
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec, simulated_workload


def test_record_trace_writes_a_chrome_trace_with_the_step_phases(tmp_path):
    workload = simulated_workload(SimSpec.parse("cpu_ms=0.1,step_ms=2,batch=8,length=512"))
    record = record_trace(
        workload, LoaderConfig(num_workers=1, prefetch_factor=2), torch.device("cpu"), tmp_path
    )
    assert record.path.parent == tmp_path and record.path.name.endswith(".pt.trace.json")
    events = json.loads(record.path.read_text())["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"autotune.wait", "autotune.copy", "autotune.compute"} <= names
    assert sum(e.get("name") == "autotune.compute" for e in events) == SCHEDULE["active"]
    assert record.active_steps == SCHEDULE["active"]
    assert record.plain_step_ms > 0 and record.traced_step_ms > 0


def test_tune_with_trace_puts_the_trace_in_the_run_folder(tmp_path):
    workload = simulated_workload(SimSpec.parse("cpu_ms=0.1,step_ms=2,batch=8,length=512"))
    result = tune(
        workload,
        max_trials=1,
        budget_s=30,
        trace=True,
        results_dir=tmp_path,
        burst={"min_steps": 4, "min_seconds": 0.3, "max_seconds": 0.6},
    )
    assert result.trace.path.parent == result.run_dir / "trace"
    assert result.trace.path.name in result.files["report"].read_text()
