"""`autotune bench --online --ranks N`: (c)'s per-rank candidates, the figures without (a), the
report of each rank's choice, the option's errors, and a real two-rank training on gloo."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from autotune.cli.app import app
from autotune.online.options import OnlineOptions
from autotune.space.config import LoaderConfig
from benchmarks.online_figures import StepTimes, Way, round_figures
from benchmarks.online_ranks import rank_candidates, train_ranks
from benchmarks.online_row import tuner_round
from benchmarks.options import OnlineBenchOptions
from benchmarks.render_online import _chosen


def test_the_ideal_per_rank_is_sought_among_the_single_best_divided_and_persistent():
    single = LoaderConfig(num_workers=5, prefetch_factor=4)
    labels = [c.label() for c in rank_candidates(single, 2)]
    assert labels == ["w3 pf4", "w3 pf4 persist", "w5 pf4", "w5 pf4 persist"]
    assert [
        c.label()
        for c in rank_candidates(
            LoaderConfig(num_workers=1, persistent_workers=True, prefetch_factor=2), 4
        )
    ] == ["w1 pf2 persist"]
    assert rank_candidates(LoaderConfig(), 2) == [LoaderConfig()]  # no workers: nothing to divide


def test_two_ways_give_the_figures_and_no_defaults_ratio():
    times = {
        Way.IDEAL: StepTimes((1.0, 2.0, 3.0, 4.0)),
        Way.ONLINE: StepTimes((2.0, 3.0, 4.0, 5.0)),
    }
    figures = round_figures(times, explored=1)
    assert figures.whole == pytest.approx(0.8) and figures.after == pytest.approx(1.0)
    assert figures.vs_defaults is None and figures.exploration_cost_s == pytest.approx(1.0)
    done = tuner_round(
        (Way.IDEAL, Way.ONLINE), times, 1, 0.9, "resolved", "w2 pf2", ["w2 pf2", "w2 pf2"]
    )
    assert _chosen(done) == "w2 pf2 (all 2 ranks)"
    split = done.model_copy(update={"rank_choices": ["w2 pf2", "w3 pf2"]})
    assert _chosen(split) == "w2 pf2 (ranks: w2 pf2, w3 pf2)"
    # the choice turned persistence off within an epoch: the ranks still run the candidate
    persisted = done.model_copy(update={"rank_choices": ["w2 pf2 persist", "w2 pf2 persist"]})
    assert _chosen(persisted) == "w2 pf2 (all 2 ranks running w2 pf2 persist)"


def test_ranks_name_their_own_results_and_need_online():
    assert (
        OnlineBenchOptions().stem == "online"
        and OnlineBenchOptions(ranks=2).stem == "online-ranks2"
    )
    # a committed run trains the single-process run's samples, shared among the ranks
    assert (OnlineBenchOptions().min_steps, OnlineBenchOptions(ranks=2).min_steps) == (3000, 1500)
    out = CliRunner().invoke(app, ["bench", "--ranks", "2"])
    assert out.exit_code == 2 and "--ranks 2 applies to --online only" in out.output
    out = CliRunner().invoke(app, ["bench", "--online", "--ranks", "0", "--workloads", "cpu-heavy"])
    assert out.exit_code == 2 and "--ranks" in out.output


@pytest.mark.slow
def test_two_gloo_ranks_train_the_online_loader_in_lockstep():
    spec = "sim:cpu_ms=0.2,io_ms=2,step_ms=2,batch=8,length=640"
    done = train_ranks(spec, "cpu", 2, 200, None, OnlineOptions(results_dir=None), {})
    assert done.times.steps == 200
    assert len(done.chosen) == 2 and done.chosen[0] == done.chosen[1]  # one decision
    assert done.state is not None and set(done.state) == {
        "exploration_ended_at",
        "exploration_cost_s",
        "stop_reason",
        "chosen",
    }
    fixed = train_ranks(
        spec,
        "cpu",
        2,
        20,
        LoaderConfig(num_workers=1, prefetch_factor=2),
        OnlineOptions(enabled=False),
        {},
    )
    assert fixed.chosen == [None, None] and fixed.state is None


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2,
    reason="NCCL ranks need a GPU each: two GPUs",
)
def test_two_nccl_ranks_train_the_online_loader_in_lockstep():
    spec = "sim:cpu_ms=0.2,io_ms=2,step_ms=2,batch=8,length=640"
    done = train_ranks(spec, "cuda", 2, 200, None, OnlineOptions(results_dir=None, cuda=True), {})
    assert done.times.steps == 200 and done.chosen[0] == done.chosen[1]


class _NoGroup(Exception):
    pass


def _no_group(*args, **kwargs):
    raise _NoGroup


def _start_method_in_a_rank(rank: int, out: str) -> None:
    """A rank's set-up up to its process group, then the start method its loaders would use."""
    import multiprocessing

    from benchmarks import online_ranks

    online_ranks.dist.init_process_group = _no_group  # this spawned process only
    with pytest.raises(_NoGroup):
        online_ranks._rank_main(
            rank, online_ranks.RankRun("sim:", "cpu", 1, 1, 0, out, None, {}, {})
        )
    with open(f"{out}/method", "w") as f:
        f.write(str(multiprocessing.get_start_method(allow_none=True)))


@pytest.mark.slow
def test_a_ranks_loader_workers_start_as_torchruns_do_not_by_spawn(tmp_path):
    torch.multiprocessing.start_processes(
        _start_method_in_a_rank, args=(str(tmp_path),), nprocs=1, start_method="spawn"
    )
    assert (tmp_path / "method").read_text() != "spawn"
