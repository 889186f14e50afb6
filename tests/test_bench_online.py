"""`autotune bench --online`: the figures from given step timestamps, the ideal's lookup in a
bench.json, the table, and one tiny real run checked for structure only."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import children
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.errors import OptionsError
from autotune.online.session import TunerState
from autotune.space.config import LoaderConfig
from benchmarks import workloads
from benchmarks.online_figures import StepTimes, Way, order, round_figures
from benchmarks.online_grid import Ideal, file_best, read_grid_file
from benchmarks.online_model import OnlineReport
from benchmarks.online_row import online_round, online_row
from benchmarks.online_run import run_online
from benchmarks.options import OnlineBenchOptions
from benchmarks.render_online import online_markdown, online_table
from benchmarks.write import write_online

CPU = torch.device("cpu")
TINY = workloads.BenchWorkload(
    "tiny", "sim:cpu_ms=0.1,step_ms=1,batch=4,length=160", "a tiny test workload"
)
W2 = LoaderConfig(num_workers=2, prefetch_factor=4)


def _even(step_s: float, n: int, start_s: float = 0.0) -> list[float]:
    return [start_s + step_s * (i + 1) for i in range(n)]


def _times(a: list[float], b: list[float], c: list[float]) -> dict[Way, StepTimes]:
    return {
        Way.DEFAULTS: StepTimes(tuple(a)),
        Way.ONLINE: StepTimes(tuple(b)),
        Way.IDEAL: StepTimes(tuple(c)),
    }


def _tuner(explored: int | None, chosen: LoaderConfig | None = W2, cost: float = 0.4) -> TunerState:
    return TunerState(
        exploring=explored is None,
        current=chosen or LoaderConfig(),
        chosen=None if explored is None else chosen,
        exploration_steps=10 if explored is None else explored,
        exploration_ended_at=explored,
        exploration_cost_s=cost,
        stop_reason=None if explored is None else "converged",
        measured={},
        windows={} if explored is None else {"w0": [100.04, 98.6], "w2 pf4": [150.26, 149.0]},
    )


def test_a_span_is_the_time_of_its_steps():
    t = StepTimes((1.0, 1.5, 2.5, 3.0))
    assert t.span(0, 4) == 3.0 and t.span(2, 4) == 1.5 and t.span(1, 2) == 0.5
    for bad in ((2, 2), (0, 5), (-1, 2)):
        with pytest.raises(ValueError):
            t.span(*bad)
    with pytest.raises(ValueError, match="decrease"):
        StepTimes((1.0, 0.5))


def test_round_figures_from_step_timestamps():
    # (c): 10 ms a step from the start. (b): 30 ms a step for its 20 exploration steps, then 10 ms
    # (and 20 ms of start-up). (a): 40 ms a step.
    ideal = _even(0.010, 100)
    online = _even(0.030, 20, 0.020) + _even(0.010, 80, 0.020 + 0.6)
    figures = round_figures(_times(_even(0.040, 100), online, ideal), explored=20)
    assert figures.whole == pytest.approx(1.0 / 1.42)
    assert figures.after == pytest.approx(0.8 / 0.8)
    assert figures.vs_defaults == pytest.approx(4.0 / 1.42)
    assert figures.exploration_cost_s == pytest.approx(0.62 - 0.2)


def test_no_after_tuning_figure_while_still_exploring():
    times = _times(_even(0.04, 50), _even(0.02, 50), _even(0.01, 50))
    still = round_figures(times, explored=None)
    assert (
        still.after is None
        and still.exploration_cost_s is None
        and still.whole == pytest.approx(0.5)
    )
    ended_last = round_figures(times, explored=50)  # ended on the last step: no step after it
    assert ended_last.after is None and ended_last.exploration_cost_s == pytest.approx(0.5)
    never = round_figures(times, explored=0)
    assert never.after == pytest.approx(never.whole) and never.exploration_cost_s == 0.0
    with pytest.raises(ValueError, match="different step counts"):
        round_figures(_times(_even(0.04, 49), _even(0.02, 50), _even(0.01, 50)), explored=None)


def test_orders_alternate_by_round():
    assert order(0) == (Way.IDEAL, Way.ONLINE, Way.DEFAULTS)
    assert order(1) == tuple(reversed(order(0))) and order(2) == order(0)


def test_a_row_takes_the_worst_round_and_judges_the_targets():
    fast = online_round(
        order(0), _times(_even(0.04, 100), _even(0.0101, 100), _even(0.01, 100)), _tuner(20)
    )
    slow = online_round(
        order(1), _times(_even(0.04, 100), _even(0.0110, 100), _even(0.01, 100)), _tuner(None)
    )
    assert fast.chosen == "w2 pf4" and fast.exploration_steps == 20 and fast.after is not None
    assert slow.chosen is None and slow.exploration_steps is None and slow.after is None
    assert fast.seconds[Way.ONLINE] == pytest.approx(1.01) and fast.tuner_cost_s == 0.4
    # (b)'s windows by configuration, as its verdicts read them (to a tenth of a batch a second).
    assert fast.windows == {"w0": [100.0, 98.6], "w2 pf4": [150.3, 149.0]}
    row = online_row(TINY, Ideal(W2, "bench.json"), [fast, slow])
    assert row.whole == slow.whole == pytest.approx(1 / 1.1, abs=1e-4)
    assert row.after == fast.after  # the rounds where (b) ended exploring
    assert row.targets == {"online_whole": False, "online_after": True}
    alone = online_row(TINY, Ideal(W2, "bench.json"), [slow])
    assert alone.after is None and alone.targets["online_after"] is None


def _bench_json(tmp_path, rows, device="cpu"):
    path = tmp_path / "bench.json"
    path.write_text(
        json.dumps(
            {
                "created": "2026-11-20T10:00:00Z",
                "environment": {"device": device},
                "rows": rows,
                "other": "ignored",
            }
        )
    )
    return path


def test_the_ideal_is_the_files_grid_best_for_the_same_spec_and_device(tmp_path):
    path = _bench_json(
        tmp_path,
        [
            {"key": "tiny", "spec": TINY.spec, "grid_best": "w2 pf4"},
            {"key": "other", "spec": "sim:step_ms=3", "grid_best": "w1 pf2"},
        ],
    )
    grid = read_grid_file(path)
    assert grid is not None and file_best(TINY, CPU, grid, path, run_grid=False) == "w2 pf4"
    changed = workloads.BenchWorkload("tiny", TINY.spec + ",io_ms=1", "its spec changed since")
    assert file_best(changed, CPU, grid, path, run_grid=True) is None  # the grid runs for it
    assert file_best(TINY, torch.device("cuda"), grid, path, run_grid=True) is None
    with pytest.raises(OptionsError) as failed:
        file_best(changed, CPU, grid, path, run_grid=False)
    message = str(failed.value)
    assert (
        "\n" not in message
        and "no grid best for workload tiny" in message
        and "--no-grid" in message
    )
    assert read_grid_file(tmp_path / "absent.json") is None


def test_an_unreadable_grid_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(OptionsError, match="is not JSON"):
        read_grid_file(bad)
    bad.write_text(json.dumps({"rows": [{"key": "tiny"}]}))
    with pytest.raises(OptionsError, match="is not a bench.json: rows.0.spec"):
        read_grid_file(bad)


def _report(steps: int) -> OnlineReport:
    ended = online_round(
        order(0), _times(_even(0.04, 100), _even(0.0101, 100), _even(0.01, 100)), _tuner(20)
    )
    still = online_round(
        order(0), _times(_even(0.04, 100), _even(0.02, 100), _even(0.01, 100)), _tuner(None)
    )
    return OnlineReport(
        command="autotune bench --online (test)",
        environment={"device": "cpu"},
        steps=steps,
        min_steps=3000,
        rounds=1,
        grid_from="bench.json",
        online={"window_steps": 8, "results_dir": None},
        total_s=12.0,
        rows=[
            online_row(TINY, Ideal(W2, "bench.json of 2026-11-20"), [ended]),
            online_row(
                workloads.BenchWorkload("slow", "sim:step_ms=5", "slow"),
                Ideal(W2, "grid run here"),
                [still],
            ),
        ],
    )


def test_the_table_marks_the_targets_and_says_when_tuning_never_ended():
    table = online_table(_report(3000)).splitlines()
    assert table[0].startswith("| workload | ideal (c) | (b) chose | exploration steps |")
    assert table[2] == (
        "| tiny | w2 pf4 | w2 pf4 | 20 (converged) | +0.0s | 0.990 ✓ | 0.990 ✓ | 3.960 |"
    )
    assert table[3] == (
        "| slow | w2 pf4 | still exploring | all (not ended) | n/a | 0.500 ✗ | n/a | 2.000 |"
    )
    markdown = online_markdown(_report(3000))
    assert "below the 3000" not in markdown and "window_steps 8" in markdown
    assert "tiny: bench.json of 2026-11-20; slow: grid run here" in markdown
    assert ">= 0.95 ✗" in markdown and ">= 0.97 ✓" in markdown
    assert "300 steps per training: below the 3000" in online_markdown(_report(300))
    explained = _report(3000).model_copy(update={"notes": ["slow: the window's noise, 4%"]})
    assert "explained after the run:\n\n- slow: the window's noise, 4%" in online_markdown(
        explained
    )


def test_bad_online_options_exit_2(tmp_path):
    runner = CliRunner()
    both = runner.invoke(app, ["bench", "--online", "--accuracy"])
    assert both.exit_code == 2 and "--accuracy and --online" in both.output
    few = runner.invoke(app, ["bench", "--online", "--steps", "1", "--out", str(tmp_path)])
    assert few.exit_code == 2 and "--steps" in few.output
    lacking = runner.invoke(
        app,
        [
            "bench",
            "--online",
            "--workloads",
            "storage",
            "--no-grid",
            "--grid-from",
            str(tmp_path / "none.json"),
            "--out",
            str(tmp_path),
        ],
    )
    assert lacking.exit_code == 2 and "no grid best for workload storage" in lacking.output
    assert not (tmp_path / "online.json").exists()


def test_online_bench_on_a_tiny_workload(tmp_path, monkeypatch):
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    grid = _bench_json(tmp_path, [{"key": "tiny", "spec": TINY.spec, "grid_best": "w1 pf2"}])
    opts = OnlineBenchOptions(
        steps=60,
        rounds=2,
        grid_from=grid,
        run_grid=False,
        device="cpu",
        max_workers=2,
        out_dir=tmp_path / "out",
    )
    lines: list[str] = []
    report = run_online(opts, lines.append, "autotune bench --online (test)")
    md, js = write_online(report, opts.out_dir, opts.stem)
    assert (md.name, js.name) == ("online.md", "online.json")
    data = OnlineReport.model_validate(json.loads(js.read_text()))
    (row,) = data.rows
    assert row.key == "tiny" and row.ideal == "w1 pf2" and str(grid) in row.ideal_source
    assert [r.order for r in row.rounds] == [list(order(0)), list(order(1))]
    for r in row.rounds:
        assert set(r.seconds) == set(Way) and all(s > 0 for s in r.seconds.values())
        assert (r.exploration_steps is None) == (r.chosen is None)
    assert set(row.targets) == {"online_whole", "online_after"}
    assert data.below_minimum and "below the 3000" in md.read_text()
    assert any("round 2/2 online" in line for line in lines) and children() == []


def test_the_three_ways_share_the_ideals_training_loop(monkeypatch):
    """The ways differ in the loader alone: the loop's transfer knobs are the ideal's in each."""
    from benchmarks import online_run

    seen = []

    class Loader:
        tuner_state = None

    def fake_train(workload, make_loader, device, transfer, steps, what):
        seen.append(transfer)
        return StepTimes((1.0,)), Loader()

    monkeypatch.setattr(online_run, "train", fake_train)
    ideal = Ideal(LoaderConfig(num_workers=8, prefetch_factor=4, channels_last=True), "test")
    opts = OnlineBenchOptions(steps=2, device="cpu")
    for way in Way:
        online_run.train_way(way, None, torch.device("cpu"), ideal, opts, str(way))
    assert seen == [ideal.config.transfer_kwargs()] * 3 and seen[0]["channels_last"] is True


def test_no_defaults_leaves_way_a_out_of_every_round(monkeypatch, tmp_path):
    """(a) trains for (b)/(a) alone; --no-defaults runs (b) and (c), in the round's order."""
    from benchmarks import online_run

    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    trained: list[Way] = []

    def fake_way(way, workload, device, ideal, opts, what, total_steps=None):
        trained.append(way)
        return StepTimes(tuple(_even(0.01, 10))), _tuner(4) if way is Way.ONLINE else None

    monkeypatch.setattr(online_run, "train_way", fake_way)
    grid = _bench_json(tmp_path, [{"key": "tiny", "spec": TINY.spec, "grid_best": "w1 pf2"}])
    opts = OnlineBenchOptions(
        steps=10, rounds=2, grid_from=grid, run_grid=False, device="cpu", defaults=False
    )
    assert online_run.ways(opts, 0) == (Way.IDEAL, Way.ONLINE)
    assert online_run.ways(opts, 1) == (Way.ONLINE, Way.IDEAL)
    report = run_online(opts, lambda line: None, "autotune bench --online --no-defaults (test)")
    assert trained == [Way.IDEAL, Way.ONLINE, Way.ONLINE, Way.IDEAL]
    (row,) = report.rows
    assert row.vs_defaults is None and all(r.vs_defaults is None for r in row.rounds)
    assert not report.defaults and "(a) was not run here (--no-defaults)" in online_markdown(report)
    assert "| n/a |" in online_table(report)
    with_a = opts.model_copy(update={"defaults": True})
    assert online_run.ways(with_a, 0) == order(0)
