"""`autotune bench --accuracy`: configurations parsed as the tables write them, the ratio and its
target, and one tiny real run checked for structure only."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from autotune.bench import accuracy, workloads
from autotune.bench.accuracy import accuracy_row, parse_config
from autotune.bench.model import AccuracyReport
from autotune.bench.options import AccuracyOptions
from autotune.bench.write import write_accuracy
from autotune.cli.app import app
from autotune.errors import OptionsError
from autotune.space.config import LoaderConfig

from conftest import children

TINY = workloads.BenchWorkload("tiny", "sim:cpu_ms=0.2,step_ms=4,batch=8,length=1024",
                               "a tiny test workload", quick=True)
HELD = workloads.BenchWorkload("held", "sim:cpu_ms=0.2,step_ms=4,batch=8", "held out", held_out=True)


def test_configurations_are_written_as_the_tables_write_them():
    assert parse_config("w0") == LoaderConfig()
    assert parse_config("w8 pf4 persist") == LoaderConfig(num_workers=8, prefetch_factor=4,
                                                          persistent_workers=True)
    assert parse_config("w2 pf2 cl").label() == "w2 pf2 cl"
    for bad, why in (("w0 pf2", "prefetch_factor needs num_workers"), ("pf2", "needs a worker count"),
                     ("w2 fast", "'fast'")):
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
    report = AccuracyReport(command="autotune bench --accuracy (test)", rows=[row], quick=False,
                            environment={}, burst={}, steady_seconds=1.0, settle_s=0.1, rounds=3,
                            total_s=1.0, notes=["tiny w0 +8%: single bursts scatter"])
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


@pytest.mark.slow
def test_accuracy_table_on_a_tiny_workload(tmp_path, monkeypatch):
    monkeypatch.setattr(workloads, "BENCH_WORKLOADS", (TINY,))
    opts = AccuracyOptions(configs=["w0", "w2 pf2"], steady_seconds=0.3, rounds=2, settle_s=0.1,
                           device="cpu", out_dir=tmp_path)
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
