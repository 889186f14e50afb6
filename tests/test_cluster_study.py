"""One optuna study shared by processes writing at once: nothing lost, nothing measured twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import optuna
import pytest
from search_fakes import burst, cfg

from autotune import environment
from autotune.search.ledger import StudyLedger
from autotune.search.options import TuneOptions
from autotune.search.study import ATTR_CONFIG, claim_lock, make_storage, open_study, trials_of
from autotune.search.tuner import Tuner
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig
from autotune.space.space import SearchSpace
from autotune.workload.simulated import SimSpec, simulated_workload

ROOT = Path(__file__).resolve().parents[1]
WRITERS = 4


def start_together(tmp_path: Path, code: str, count: int, env: dict[str, str] | None = None):
    """`count` Python processes running `code`; they wait for one go-file to start at once."""
    go = tmp_path / "go"
    prelude = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        while not os.path.exists({str(go)!r}):
            time.sleep(0.01)
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", prelude + textwrap.dedent(code), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        for i in range(count)
    ]
    go.write_text("")
    outputs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-2000:]
    return [out for out, _ in outputs]


RAW_WRITER = """
    from autotune.search.study import open_study, record
    from autotune.search.trial import TrialRecord, TrialStatus
    from autotune.space.config import LoaderConfig
    me = int(sys.argv[1])
    study = open_study(seed=me, storage={storage!r}, study_name="raw")
    for i in range({per_writer}):
        trial = study.ask()
        config = LoaderConfig(num_workers=me * 1000 + i)
        record(trial, TrialRecord(i, config, TrialStatus.FAILED,
                                  error=f"writer {{me}} trial {{i}}"))
        study.tell(trial, float(me * 1000 + i))
"""


@pytest.mark.slow
def test_journal_study_keeps_every_trial_of_four_writers_at_once(tmp_path):
    storage = str(tmp_path / "shared.journal")
    per_writer = 40
    start_together(tmp_path, RAW_WRITER.format(storage=storage, per_writer=per_writer), WRITERS)
    study = optuna.load_study(study_name="raw", storage=make_storage(storage))
    trials = study.get_trials()
    assert len(trials) == WRITERS * per_writer
    assert len({t.number for t in trials}) == len(trials)  # no trial number handed out twice
    values = sorted(t.value for t in trials)
    assert values == sorted(float(w * 1000 + i) for w in range(WRITERS) for i in range(per_writer))
    workers = sorted(t.user_attrs[ATTR_CONFIG]["num_workers"] for t in trials)
    assert workers == sorted(values)  # each trial kept its own attributes


TRIALS_EACH = 3
TUNER = """
    import json
    from autotune.search.options import TuneOptions
    from autotune.search.tuner import Tuner
    from autotune.workload.simulated import SimSpec, simulated_workload
    opts = TuneOptions(budget_s=120, max_trials={trials}, results_dir=None, storage={storage!r},
                       study_name="tuned", max_workers=3,
                       burst=dict(min_steps=4, min_seconds=0.2, max_seconds=0.5, warmup_steps=1))
    tuner = Tuner(simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=8, length=256)), opts)
    tuner.run()
    search = [t for t in tuner.trials if t.phase == "search"]
    print(json.dumps(dict(configs=[t.config.as_dict() for t in search],
                          measured=sum(t.measured for t in search), reason=tuner.stop_reason)))
"""


@pytest.mark.slow
def test_tuners_sharing_a_study_never_measure_a_configuration_twice(tmp_path):
    storage = str(tmp_path / "tuned.journal")
    # Same seed everywhere, no Slurm slot: the samplers propose the same points in the same
    # order, the worst case for two processes picking the same configuration at once.
    outputs = start_together(
        tmp_path,
        TUNER.format(storage=storage, trials=TRIALS_EACH),
        WRITERS,
        env={"SLURM_ARRAY_TASK_ID": "", "SLURM_PROCID": "", "RANK": ""},
    )
    runs = [json.loads(out.strip().splitlines()[-1]) for out in outputs]
    own = [LoaderConfig(**c) for run in runs for c in run["configs"]]
    study = open_study(seed=0, storage=storage, study_name="tuned")
    measured = [t for t in trials_of(study) if t.phase == "search"]  # not the re-measurements
    configs = [t.config for t in measured]
    assert len(configs) == len(set(configs)), "a configuration was measured twice"
    assert configs.count(PYTORCH_DEFAULTS) == 1
    assert sorted(map(repr, configs)) == sorted(map(repr, own))  # none lost, none extra
    # The space (3 workers: 25 points, 50 with channels-last) holds more than all the trial caps
    # together: each process reaches its own cap, whatever the others took, and none passes it.
    space_size = len(list(SearchSpace(max_workers=3, cuda=False, channels_last_ok=False).grid()))
    assert WRITERS * TRIALS_EACH <= space_size
    assert [run["measured"] for run in runs] == [TRIALS_EACH] * WRITERS, runs
    assert all(run["reason"] == f"{TRIALS_EACH} trials (--trials)" for run in runs), runs
    # Every ask was answered, and a repeat only as failed: a duplicate complete trial would weigh
    # its point twice in every process's sampler.
    trials = study.get_trials(deepcopy=False)
    assert not [t for t in trials if t.state == optuna.trial.TrialState.RUNNING]
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert all(ATTR_CONFIG in t.user_attrs for t in complete)


def test_settle_claims_once_and_then_reports_what_is_known(tmp_path):
    storage = str(tmp_path / "ledger.journal")
    study = open_study(seed=0, storage=storage, study_name="ledger")
    ledger = StudyLedger(study, claim_lock(storage))
    config = LoaderConfig(num_workers=2, prefetch_factor=2)
    first, second = study.ask(), study.ask()
    assert ledger.settle(first, config) is None  # claimed: measure it
    busy = ledger.settle(second, config)
    assert busy is not None and busy.busy and busy.value is None
    first.set_user_attr(ATTR_CONFIG, config.as_dict())
    study.tell(first, 123.0)
    known = ledger.settle(study.ask(), config)
    assert known is not None and known.value == 123.0 and not known.busy
    ledger.enqueue_once(PYTORCH_DEFAULTS.as_dict())
    ledger.enqueue_once(PYTORCH_DEFAULTS.as_dict())
    waiting = study.get_trials(states=(optuna.trial.TrialState.WAITING,))
    assert len(waiting) == 1


class StuckSampler(optuna.samplers.BaseSampler):
    """Proposes one point over and over, as a TPE sampler told nothing new keeps doing."""

    def __init__(self, params: dict):
        self.params = params

    def infer_relative_search_space(self, study, trial):
        return {}

    def sample_relative(self, study, trial, search_space):
        return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self.params[param_name]


def _stuck_tuner(max_trials: int | None, monkeypatch) -> Tuner:
    """A tuner over 9 points (w0, and w1 with 4 prefetch factors x persistent) whose sampler only
    ever proposes w1 pf2, and whose bursts are fakes, each faster than the last."""
    monkeypatch.setattr(environment, "collect", lambda *args, **kwargs: {})  # imports: seconds
    workload = simulated_workload(SimSpec(cpu_ms=0, step_ms=1, batch=4, shape=(4,), length=64))
    tuner = Tuner(
        workload,
        TuneOptions(
            budget_s=600,
            max_trials=max_trials,
            results_dir=None,
            max_workers=1,
            device="cpu",
            ram_budget_mib=1e6,
        ),
    )
    tuner.study.sampler = StuckSampler(tuner.space.params(cfg(1)))
    rates = iter(range(100, 10_000, 10))
    tuner.bursts.measure = lambda config, max_seconds=None, on_progress=None, full_window=False: (
        burst(config, next(rates))
    )
    return tuner


@pytest.mark.parametrize("cap", [4, None])
def test_a_sampler_that_repeats_itself_falls_back_to_unmeasured_points(cap, monkeypatch):
    tuner = _stuck_tuner(cap, monkeypatch)
    tuner._search(None)
    space = list(tuner.space.grid())
    configs = [t.config for t in tuner.trials]
    assert len(configs) == len(set(configs)) == (cap or len(space))  # each once, to the cap
    assert configs[:2] == [PYTORCH_DEFAULTS, cfg(1)]  # the defaults, then the sampler's point
    # Then the untaken points nearest the best so far (the last measured): one knob changed first.
    assert configs[2] == cfg(1, 1)
    assert tuner.stop_reason == (
        f"{cap} trials (--trials)" if cap else "every configuration is measured or being measured"
    )
    trials = tuner.study.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) == len(configs) and all(ATTR_CONFIG in t.user_attrs for t in complete)
    repeats = [t for t in trials if t.state == optuna.trial.TrialState.FAIL]
    assert repeats and all(t.params == tuner.space.params(cfg(1)) for t in repeats)


def test_enqueue_untaken_skips_what_the_study_holds(tmp_path):
    storage = str(tmp_path / "untaken.journal")
    study = open_study(seed=0, storage=storage, study_name="untaken")
    ledger = StudyLedger(study, claim_lock(storage))
    space = SearchSpace(max_workers=1, cuda=False, channels_last_ok=False)
    w0, w1 = PYTORCH_DEFAULTS, cfg(1, 1)
    measured = study.ask()
    measured.set_user_attr(ATTR_CONFIG, w0.as_dict())
    study.tell(measured, 100.0)
    assert ledger.settle(study.ask(), w1) is None  # claimed by a running trial
    order = space.nearest_first(w0)
    first_free = order[2]  # w0 measured, w1 pf1 claimed
    assert ledger.enqueue_untaken(order, space.params) == first_free
    # Already waiting: left in the queue once, not enqueued twice.
    assert ledger.enqueue_untaken(order, space.params) == first_free
    waiting = study.get_trials(states=(optuna.trial.TrialState.WAITING,))
    assert [t.system_attrs["fixed_params"] for t in waiting] == [space.params(first_free)]
    assert ledger.enqueue_untaken([w0, w1], space.params) is None  # every candidate taken


def test_nearest_first_orders_the_whole_space_by_distance():
    space = SearchSpace(max_workers=3, cuda=False, channels_last_ok=True)
    best = LoaderConfig(num_workers=2, prefetch_factor=4, channels_last=True)
    order = space.nearest_first(best)
    assert sorted(map(repr, order)) == sorted(map(repr, space.grid()))  # every point, once
    assert order[0] == best
    assert [c.num_workers for c in order[1:4]] == [2, 2, 2]  # one knob changed
    assert {abs(c.num_workers - 2) for c in order[:16]} == {0}  # all of w2 before w1 or w3
