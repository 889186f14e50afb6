"""Nothing measured is lost: every trial is in the run folder's study as it ends, an interrupt
keeps what was measured and writes the report, and --resume continues the same study without
measuring anything twice."""

from __future__ import annotations

import os
import signal

import hostile_workloads as hw
import pytest
from robust_support import TINY_BURST, child_pids

from autotune import tune
from autotune.errors import OptionsError
from autotune.search.interrupt import TuningInterrupted
from autotune.search.study import open_study, trials_of
from autotune.space.config import PYTORCH_DEFAULTS
from autotune.workload.base import Workload
from autotune.workload.simulated import SleepStep

# The trial counts asserted here are set by max_trials alone: the early-stop rules would end a
# search whose best lands within 5% of the device ceiling, which `slow` at 2 workers does or does
# not by a few samples/s from run to run.
OPTIONS = {
    "budget_s": 60,
    "max_workers": 2,
    "device": "cpu",
    "burst": TINY_BURST,
    "early_stop": False,
}


def _journal_trials(run_dir):
    return trials_of(
        open_study(seed=0, storage=str(run_dir / "study.journal"), study_name=_only_study(run_dir))
    )


def _only_study(run_dir):
    import optuna

    from autotune.search.study import make_storage

    (name,) = optuna.study.get_all_study_names(make_storage(str(run_dir / "study.journal")))
    return name


def _key(trial):
    return trial.config, trial.status, trial.samples_per_s


def _searched(trials):
    """The search's trials, without the re-measurements of the best few that follow them."""
    return [t for t in trials if t.phase == "search"]


def test_every_trial_is_in_the_study_journal_as_it_ends(tmp_path):
    seen_in_journal = []

    def on_trial(progress):
        seen_in_journal.append(len(_journal_trials(run_dirs()[0])))

    def run_dirs():
        return sorted((tmp_path / "runs").iterdir())

    result = tune(hw.slow(), results_dir=tmp_path, max_trials=3, on_trial=on_trial, **OPTIONS)
    assert seen_in_journal == list(range(1, len(result.trials) + 1))
    assert len(_searched(result.trials)) == 3
    assert [_key(t) for t in _journal_trials(result.run_dir)] == [_key(t) for t in result.trials]


def test_resume_continues_without_measuring_again(tmp_path):
    first = tune(hw.slow(), results_dir=tmp_path, max_trials=3, **OPTIONS)
    resumed = tune(hw.slow(), resume=first.run_dir, max_trials=5, **OPTIONS)
    assert resumed.run_dir == first.run_dir
    assert [_key(t) for t in resumed.trials[: len(first.trials)]] == [_key(t) for t in first.trials]
    configs = [t.config for t in _searched(resumed.trials)]
    assert len(configs) == 5 and len(set(configs)) == 5
    assert resumed.baseline.config == PYTORCH_DEFAULTS
    rows = (first.run_dir / "trials.csv").read_text().strip().splitlines()[1:]
    assert len(rows) == len(resumed.trials)  # the report covers old and new trials


def test_resume_refuses_another_workload(tmp_path):
    first = tune(hw.slow(), results_dir=tmp_path, max_trials=1, **OPTIONS)
    with pytest.raises(
        OptionsError, match="was measured with workload.name slow, not raises-in-workers"
    ):
        tune(hw.raises_in_workers(), resume=first.run_dir, max_trials=2, **OPTIONS)


def test_journal_cut_mid_append_is_repaired_on_resume(tmp_path):
    first = tune(hw.slow(), results_dir=tmp_path, max_trials=2, **OPTIONS)
    journal = first.run_dir / "study.journal"
    with open(journal, "ab") as f:  # what a SIGKILL during an append leaves behind
        f.write(b'{"op_code": 5, "worker_id": "x", "trial_id": 1, "sta')
    resumed = tune(hw.slow(), resume=first.run_dir, max_trials=3, **OPTIONS)
    assert [_key(t) for t in resumed.trials[: len(first.trials)]] == [_key(t) for t in first.trials]
    assert len(_searched(_journal_trials(first.run_dir))) == 3
    assert journal.read_bytes().endswith(b"\n")


class InterruptingStep(SleepStep):
    """Sends this process SIGINT (a Ctrl-C) from inside the given burst's step."""

    def __init__(self, seconds: float, at_call: int):
        super().__init__(seconds)
        self.calls = 0
        self.at_call = at_call

    def __call__(self, batch: object) -> None:
        self.calls += 1
        if self.calls == self.at_call:
            os.kill(os.getpid(), signal.SIGINT)
        super().__call__(batch)


def test_interrupt_keeps_measured_trials_writes_the_report_and_resume_measures_the_rest(tmp_path):
    before = child_pids()
    # Past the calls of the probes and a few bursts: the signal lands inside a burst after some
    # trials have finished. A tuning of one trial counts the probes' calls and those of the
    # bursts after them (the trial and its record, as many as the noise asked for).
    counter = InterruptingStep(hw.SLOW_STEP_S, at_call=-1)
    one = tune(
        Workload(hw.Slow(), hw.BATCH, counter, shuffle=False, name="slow", device="cpu"),
        results_dir=None,
        max_trials=1,
        **OPTIONS,
    )
    steps = one.trials[0].result.steps
    step = InterruptingStep(hw.SLOW_STEP_S, at_call=counter.calls + steps + 10)
    workload = Workload(hw.Slow(), hw.BATCH, step, shuffle=False, name="slow", device="cpu")
    with pytest.raises(TuningInterrupted) as caught:
        tune(workload, results_dir=tmp_path, max_trials=8, **OPTIONS)
    stop = caught.value
    assert stop.signal_name == "SIGINT" and stop.exit_code == 130
    kept = stop.result.trials
    assert kept and stop.result.interrupted == "SIGINT"
    run_dir = stop.result.run_dir
    assert "Interrupted by SIGINT" in (run_dir / "trials.md").read_text()
    assert (run_dir / "recipe.json").is_file()
    assert [_key(t) for t in _journal_trials(run_dir)] == [_key(t) for t in kept]
    assert child_pids() <= before

    # Two more searched trials than were kept (the kept may hold re-measurements too, where the
    # signal landed after the search).
    resumed = tune(hw.slow(), resume=run_dir, max_trials=len(_searched(kept)) + 2, **OPTIONS)
    assert [_key(t) for t in resumed.trials[: len(kept)]] == [_key(t) for t in kept]
    searched = _searched(resumed.trials)
    assert len(searched) == len(_searched(kept)) + 2
    assert len({t.config for t in searched}) == len(searched)
