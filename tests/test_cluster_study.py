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

from autotune.cluster.ledger import StudyLedger
from autotune.search.study import ATTR_CONFIG, claim_lock, make_storage, open_study, trials_of
from autotune.space.config import PYTORCH_DEFAULTS, LoaderConfig

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
    procs = [subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code), str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **(env or {})})
             for i in range(count)]
    go.write_text("")
    outputs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-2000:]
    return [out for out, _ in outputs]


RAW_WRITER = """
    from autotune.search.study import open_study, record
    from autotune.search.trial import FAILED, Trial
    from autotune.space.config import LoaderConfig
    me = int(sys.argv[1])
    study = open_study(seed=me, storage={storage!r}, study_name="raw")
    for i in range({per_writer}):
        trial = study.ask()
        config = LoaderConfig(num_workers=me * 1000 + i)
        record(trial, Trial(i, config, FAILED, error=f"writer {{me}} trial {{i}}"))
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


TUNER = """
    import json
    from autotune.search.options import TuneOptions
    from autotune.search.tuner import Tuner
    from autotune.workload.simulated import SimSpec, simulated_workload
    opts = TuneOptions(budget_s=120, max_trials=3, results_dir=None, storage={storage!r},
                       study_name="tuned", max_workers=3,
                       burst=dict(min_steps=4, min_seconds=0.2, max_seconds=0.5, warmup_steps=1))
    tuner = Tuner(simulated_workload(SimSpec(cpu_ms=0.2, step_ms=2, batch=8, length=256)), opts)
    tuner.run()
    print(json.dumps([t.config.as_dict() for t in tuner.trials if t.phase == "search"]))
"""


@pytest.mark.slow
def test_tuners_sharing_a_study_never_measure_a_configuration_twice(tmp_path):
    storage = str(tmp_path / "tuned.journal")
    # Same seed everywhere, no Slurm slot: the samplers propose the same points in the same
    # order, the worst case for two processes picking the same configuration at once.
    outputs = start_together(tmp_path, TUNER.format(storage=storage), WRITERS,
                             env={"SLURM_ARRAY_TASK_ID": "", "SLURM_PROCID": "", "RANK": ""})
    own = [LoaderConfig(**c) for out in outputs for c in json.loads(out.strip().splitlines()[-1])]
    study = open_study(seed=0, storage=storage, study_name="tuned")
    measured = [t for t in trials_of(study) if t.phase == "search"]  # not the re-measurements
    configs = [t.config for t in measured]
    assert len(configs) == len(set(configs)), "a configuration was measured twice"
    assert configs.count(PYTORCH_DEFAULTS) == 1
    assert sorted(map(repr, configs)) == sorted(map(repr, own))  # none lost, none extra
    assert len(own) == WRITERS * 3


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
