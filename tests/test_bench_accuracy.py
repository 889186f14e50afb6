"""`autotune bench --accuracy`: configurations parsed as the tables write them, the ratio and its
target, and one tiny real run checked for structure only."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from conftest import children
from typer.testing import CliRunner

from autotune.burst.runner import BurstSettings
from autotune.cli.app import app
from autotune.errors import OptionsError
from autotune.search.options import BurstOptions
from autotune.space.config import LoaderConfig
from benchmarks import accuracy, workloads
from benchmarks.accuracy import accuracy_row, parse_config
from benchmarks.model import AccuracyReport
from benchmarks.options import AccuracyOptions
from benchmarks.write import write_accuracy

TINY = workloads.BenchWorkload(
    "tiny", "sim:cpu_ms=0.2,step_ms=4,batch=8,length=1024", "a tiny test workload", quick=True
)
HELD = workloads.BenchWorkload(
    "held", "sim:cpu_ms=0.2,step_ms=4,batch=8", "held out", held_out=True
)


def test_configurations_are_written_as_the_tables_write_them():
    assert parse_config("w0") == LoaderConfig()
    assert parse_config("w8 pf4 persist") == LoaderConfig(
        num_workers=8, prefetch_factor=4, persistent_workers=True
    )
    assert parse_config("w2 pf2 cl").label() == "w2 pf2 cl"
    for bad, why in (
        ("w0 pf2", "prefetch_factor needs num_workers"),
        ("pf2", "needs a worker count"),
        ("w2 fast", "'fast'"),
    ):
        with pytest.raises(OptionsError, match=why):
            parse_config(bad)


def test_ratio_is_burst_median_over_steady_median_within_five_percent():
    row = accuracy_row(TINY, LoaderConfig(), [100.0, 120.0, 104.0], [100.0, 98.0, 101.0])
    assert row.burst_median == 104.0 and row.steady_median == 100.0
    assert row.ratio == pytest.approx(1.04) and row.within is True
    over = accuracy_row(TINY, LoaderConfig(), [110.0, 107.0, 108.0], [100.0, 100.0, 100.0])
    assert over.ratio == pytest.approx(1.08) and over.within is False
    failed = accuracy_row(TINY, LoaderConfig(), [], [], "RuntimeError: no space left")
    assert failed.ratio is None and failed.within is False and failed.error


def test_notes_added_after_the_run_are_in_the_markdown(tmp_path):
    """A miss explained in the JSON's notes reaches the Markdown written from it."""
    row = accuracy_row(TINY, LoaderConfig(), [110.0, 107.0, 108.0], [100.0, 100.0, 100.0])
    report = AccuracyReport(
        command="autotune bench --accuracy (test)",
        rows=[row],
        quick=False,
        environment={},
        burst={},
        steady_seconds=1.0,
        settle_s=0.1,
        rounds=3,
        total_s=1.0,
        notes=["tiny w0 +8%: single bursts scatter"],
    )
    md, _ = write_accuracy(report, tmp_path, "accuracy")
    text = md.read_text()
    assert "1.080 ✗" in text
    assert "- tiny w0 +8%: single bursts scatter" in text.split("Target: within")[1]


def test_the_held_out_workload_is_measured_only_when_named(monkeypatch):
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY, HELD))
    assert [w.key for w in accuracy.accuracy_workloads(None, quick=False)] == ["tiny"]
    assert [w.key for w in accuracy.accuracy_workloads(["held"], quick=False)] == ["held"]


def test_bad_accuracy_options_exit_2():
    bad = CliRunner().invoke(app, ["bench", "--accuracy", "--configs", "w0,w2 turbo"])
    assert bad.exit_code == 2 and "bad configuration 'w2 turbo'" in bad.output


def test_bad_burst_settings_exit_2_naming_the_setting():
    for args, said in (
        (
            ["--accuracy", "--burst", "max_seconds=0"],
            "--burst: max_seconds: Input should be greater than 0",
        ),
        (["--accuracy", "--burst", "speed=3"], "--burst: bad setting 'speed=3'"),
        (["--burst", "max_seconds=10"], "apply to --accuracy only"),
        (["--full-window"], "apply to --accuracy only"),
    ):
        bad = CliRunner().invoke(app, ["bench", *args])
        assert bad.exit_code == 2 and said in bad.output, bad.output


def test_bursts_other_than_trials_run_with_their_settings_and_say_so(tmp_path, monkeypatch):
    """Window length, warm-up and the record's full window reach every burst, and the report
    says the bursts were not the tuner's trials."""
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    ran: list[BurstSettings] = []

    def fake_burst(workload, config, device, settings, **kwargs):
        ran.append(settings)
        return SimpleNamespace(samples_per_s=100.0)

    monkeypatch.setattr(accuracy, "run_burst", fake_burst)
    monkeypatch.setattr(
        accuracy, "measure_steady", lambda *args, **kwargs: SimpleNamespace(samples_per_s=100.0)
    )
    opts = AccuracyOptions(
        configs=["w0"],
        rounds=2,
        steady_seconds=1,
        device="cpu",
        out_dir=tmp_path,
        burst={"max_seconds": "10", "warmup_steps": "100"},
        full_window=True,
    )
    report = accuracy.run_accuracy(opts, lambda line: None, "autotune bench --accuracy (test)")
    assert len(ran) == 2 and all(
        s.max_seconds == 10 and s.min_seconds == 10 and s.warmup_steps == 100 for s in ran
    )
    assert report.burst["full_window"] is True and report.as_trials is False
    md, _ = write_accuracy(report, tmp_path, "accuracy")
    assert "settings other than a trial's" in md.read_text()
    trials = AccuracyOptions(configs=["w0"])
    assert trials.as_trials and trials.burst.settings() == BurstOptions().settings()


def test_which_comes_first_alternates_round_by_round(tmp_path, monkeypatch):
    """Burst first in odd rounds, steady first in even ones, so a machine drifting between minutes
    weighs on both sides alike; the report and its markdown say so, and files from before the
    change still read as burst-first."""
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    calls: list[str] = []
    # A machine slowing down call by call: with the burst always first, every pair would read high.
    rate = iter(range(1000, 0, -100))

    def fake_burst(*args, **kwargs):
        calls.append("burst")
        return SimpleNamespace(samples_per_s=float(next(rate)))

    def fake_steady(*args, **kwargs):
        calls.append("steady")
        return SimpleNamespace(samples_per_s=float(next(rate)))

    monkeypatch.setattr(accuracy, "run_burst", fake_burst)
    monkeypatch.setattr(accuracy, "measure_steady", fake_steady)
    lines: list[str] = []
    opts = AccuracyOptions(
        configs=["w0"], rounds=4, steady_seconds=1, device="cpu", out_dir=tmp_path
    )
    report = accuracy.run_accuracy(opts, lines.append, "autotune bench --accuracy (test)")
    assert calls == ["burst", "steady", "steady", "burst"] * 2
    row = report.rows[0]
    assert row.burst_samples_per_s == [1000, 700, 600, 300]
    assert row.steady_samples_per_s == [900, 800, 500, 400]
    assert row.ratio == 1.0  # the drift cancels: medians 650 and 650
    assert ["(burst first)" in x for x in lines] == [True, False, True, False]
    assert report.order_alternates
    md, _ = write_accuracy(report, tmp_path, "accuracy")
    assert "the burst first in odd rounds and second in even ones" in md.read_text()
    old = AccuracyReport.model_validate({**report.model_dump(exclude={"order_alternates"})})
    assert not old.order_alternates
    md, _ = write_accuracy(old, tmp_path, "old")
    assert "the burst first in every round" in md.read_text()


@pytest.mark.slow
def test_accuracy_table_on_a_tiny_workload(tmp_path, monkeypatch):
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    opts = AccuracyOptions(
        configs=["w0", "w2 pf2"],
        steady_seconds=0.3,
        rounds=2,
        settle_s=0.1,
        device="cpu",
        out_dir=tmp_path,
    )
    lines: list[str] = []
    report = accuracy.run_accuracy(opts, lines.append, "autotune bench --accuracy (test)")
    md, js = write_accuracy(report, opts.out_dir, opts.stem)
    assert (md.name, js.name) == ("accuracy.md", "accuracy.json")
    data = AccuracyReport.model_validate(json.loads(js.read_text()))
    assert [(r.workload, r.config) for r in data.rows] == [("tiny", "w0"), ("tiny", "w2 pf2")]
    for r in data.rows:
        assert r.error is None and len(r.burst_samples_per_s) == 2 == len(r.steady_samples_per_s)
        assert r.ratio == pytest.approx(r.burst_median / r.steady_median, rel=1e-3)
        assert r.within is not None
    assert "| workload | configuration | burst samples/s |" in md.read_text()
    assert len(lines) == 4 and children() == []
