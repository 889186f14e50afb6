"""`autotune overhead`: plain against instrumented on one loader, plus the directly accounted
cost."""

import json

import pytest
import torch
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.space.config import LoaderConfig
from autotune.workload.simulated import SimSpec, simulated_workload
from benchmarks.overhead import autotune_hooks, compare, measure_overhead
from benchmarks.overhead_report import write_report
from benchmarks.overhead_result import AUTOTUNE, CONTROL, PROFILER, STAGES, AccountedCost, StageCost

CPU = torch.device("cpu")
W1 = LoaderConfig(num_workers=1, prefetch_factor=2)


def test_measure_overhead_returns_both_figures(tmp_path):
    workload = simulated_workload(SimSpec.parse("cpu_ms=0.1,step_ms=3,batch=8,length=512"))
    result = measure_overhead(workload, W1, CPU, pairs=2, segment_s=0.15)
    for variant in (CONTROL, AUTOTUNE, PROFILER, STAGES):
        comparison = result.comparisons[variant]
        assert len(comparison.pairs) == 2
        assert all(plain > 0 and instrumented > 0 for plain, instrumented in comparison.pairs)
    assert -100 < result.overhead_pct() < 100
    accounted = result.accounted
    assert accounted.span_us > 0 and accounted.sampler_cpu_ms_per_s >= 0 and accounted.step_ms > 0
    paths = write_report(result, tmp_path, "autotune overhead test")
    data = json.loads(paths["json"].read_text())
    assert data["variants"][AUTOTUNE]["overhead_pct"] == round(result.overhead_pct(), 2)
    assert data["accounted"]["bound_pct"] == round(accounted.bound_pct, 3)
    assert "side by side" in paths["md"].read_text()
    # The stage timing: its own side-by-side variant and its directly accounted cost.
    assert result.stage_cost.timer_us > 0 and result.stage_cost.item_cpu_ms > 0
    assert result.stage_cost.stages_per_item == pytest.approx(1 + 1 / 8)  # __getitem__ + collate
    assert data["stage_cost"]["bound_pct"] == round(result.stage_cost.bound_pct, 3)
    assert "Per-stage timing inside the workers" in paths["md"].read_text()


def test_stage_cost_is_timer_cpu_per_item_over_the_workers_cpu_per_item():
    cost = StageCost(timer_us=2.0, stages_per_item=5.0, item_cpu_ms=4.0)
    assert cost.bound_pct == pytest.approx(100 * 10e-6 / 4e-3)


def test_plain_segments_follow_the_emulated_step_and_hooks_restore_the_feed():
    # An 8 ms emulated step on 8 samples: neither arm can exceed 1000 samples/s.
    workload = simulated_workload(SimSpec.parse("cpu_ms=0.01,step_ms=8,batch=8,length=512"))
    comparison = compare(workload, W1, CPU, autotune_hooks(CPU), pairs=2, segment_s=0.2)
    for plain, instrumented in comparison.pairs:
        assert 0 < plain <= 1000 * 1.02 and 0 < instrumented <= 1000 * 1.02


def test_accounted_bound_adds_span_time_per_step_and_sampler_cpu():
    cost = AccountedCost(span_us=2.0, spans_per_step=3, step_ms=1.0, sampler_cpu_ms_per_s=10.0)
    assert cost.bound_pct == pytest.approx(0.6 + 1.0)


def test_overhead_command_writes_results_bench(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "overhead",
            "sim:cpu_ms=0.1,step_ms=3,batch=8,length=512",
            "--num-workers",
            "1",
            "--pairs",
            "1",
            "--segment",
            "0.1",
            "--results-dir",
            str(tmp_path),
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "bench" / "overhead.md").is_file()
    assert json.loads((tmp_path / "bench" / "overhead.json").read_text())["variants"]


def test_budget_is_judged_by_the_accounted_cost_when_the_machine_is_noisy():
    from benchmarks.overhead_result import Comparison, OverheadResult

    result = OverheadResult("w", W1, "cpu", 0.5)
    result.comparisons[CONTROL] = Comparison([(100.0, 80.0), (100.0, 120.0), (100.0, 100.0)])
    result.comparisons[AUTOTUNE] = Comparison(
        [(100.0, 90.0)] * 3
    )  # -10%: noise this wide says nothing
    result.accounted = AccountedCost(
        span_us=1.0, spans_per_step=3, step_ms=10.0, sampler_cpu_ms_per_s=10.0
    )
    assert result.noise_pct > 2
    assert result.within_budget  # 1.03% accounted
    quiet = OverheadResult(
        "w",
        W1,
        "cpu",
        0.5,
        comparisons={
            CONTROL: Comparison([(100.0, 100.5)] * 3),
            AUTOTUNE: Comparison([(100.0, 90.0)] * 3),
        },
        accounted=result.accounted,
    )
    assert not quiet.within_budget  # quiet enough: the measured 10% decides
