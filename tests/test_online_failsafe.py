"""autotune.DataLoader never breaks the training: every autotune component made to raise, in turn,
at its first, an early and a late call; configurations the tuner tries that raise, kill their
worker or time out; the script's own error raised as torch raises it. In every case the loop gets
exactly torch's batches, and a report is written."""

from __future__ import annotations

import gc
import multiprocessing.synchronize
import os
import signal
import time
from typing import Any

import pytest
import torch
from online_fakes import Indices, StepClock, _nothing_written_at_exit  # noqa: F401

import autotune
from autotune.burst.teardown import release_loader
from autotune.online import epoch as epoch_module
from autotune.online import finish, registry, setup
from autotune.online import session as session_module
from autotune.online.inner import TORCH_DATALOADER
from autotune.online.measurement import Measurement
from autotune.online.meter import Ledger, Meter
from autotune.online.policy import HillClimb
from autotune.online.pool_memory import PoolMemory
from autotune.recipe.model import load_recipe

N, BATCH, EPOCHS = 64, 2, 3
# Short windows on the real clock: the climb switches configurations within the first epoch
# (a 64-step horizon: windows inside the 32-step epochs, not whole epochs).
QUICK = {
    "window_steps": 2,
    "window_s": 0.0,
    "warmup_steps": 0,
    "max_explore_share": 1.0,
    "max_workers": 2,
    "max_windows": 2,
    "fixed": ["prefetch_factor"],
    "max_explore_steps": 64,
}


class Slow(Indices):
    """Item i is i, after a millisecond of storage latency (workers pay off)."""

    def __getitem__(self, i):
        time.sleep(0.001)
        return i


def _torch_batches(dataset) -> list[list[int]]:
    loader = TORCH_DATALOADER(
        dataset, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    return [b.tolist() for _ in range(EPOCHS) for b in loader]


def _train(dataset, tmp_path, fake_clock=False, **kwargs) -> tuple[list[list[int]], Any]:
    """EPOCHS epochs of `dataset`; on a fake clock, the same path every run (the same calls)."""
    online = {**QUICK, "results_dir": str(tmp_path), "name": "t", **kwargs.pop("online", {})}
    loader = autotune.DataLoader(
        dataset,
        batch_size=BATCH,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
        online=online,
        **kwargs,
    )
    if fake_clock:
        loader.tune_with(
            loader._session.policy,
            clock=StepClock(
                lambda: loader.config,
                (0.010, 0.006, 0.004),
                lambda: loader._session.meter._entered is not None,
            ),
        )
        loader._own_policy = False  # its first epoch still decides its role, as in a real run
        loader._session.meter = Meter(loader._session.meter.clock, process_cpu=lambda: 0.0)
    return [b.tolist() for _ in range(EPOCHS) for b in loader], loader


def _report(tmp_path) -> str:
    (run_dir,) = (tmp_path / "runs").iterdir()
    load_recipe(run_dir / "recipe.json")
    return (run_dir / "report.md").read_text()


# Each component of autotune that runs inside the training loop, by the call it makes.
COMPONENTS = {
    "policy.observe": (HillClimb, "observe"),
    "policy.epoch_ended": (HillClimb, "epoch_ended"),
    "meter.enter": (Meter, "enter"),
    "meter.switching": (Meter, "switching"),
    "meter.handed_out": (Meter, "handed_out"),
    "meter.epoch_ended": (Meter, "epoch_ended"),
    "measurement.add": (Measurement, "add"),
    "finish.measured_block": (finish, "measured_block"),
    "finish.report": (finish, "report"),
    "registry (each step)": (session_module, "registry"),
    "session.see_batch": (session_module.Session, "see_batch"),
    "session.delivered": (session_module.Session, "delivered"),
    "ledger.add": (Ledger, "add"),
    "outbox.write": (finish.Outbox, "write"),
    "outbox.publish": (finish.Outbox, "publish"),
    "memory.learn_batch": (PoolMemory, "learn_batch"),
    "memory.room": (PoolMemory, "room"),
    "setup.epoch_starts": (setup, "epoch_starts"),
    "setup.join_ranks": (setup, "join_ranks"),
    "run_length.from_stack": (setup, "from_stack"),
    "inner.unwatched": (epoch_module, "unwatched"),
    "inner.timed": (epoch_module, "timed"),
}


def _wrap(monkeypatch, owner, name, nth: int | None) -> dict[str, int]:
    """Count `owner.name`'s calls; raise on call `nth` (None: never)."""
    real = getattr(owner, name)
    calls = {"n": 0}

    def counted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == nth:
            raise RuntimeError(f"injected into {name}")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


_CALLS: dict[str, int] = {}


def _clean_calls(owner, name: str, tmp_path, **train) -> int:
    """`owner.name`'s calls in a run where nothing raises."""
    with pytest.MonkeyPatch.context() as mp:
        calls = _wrap(mp, owner, name, None)
        _train(Slow(N), tmp_path / "clean", fake_clock=True, **train)
    registry.reset()  # the run after it is another process's: it must tune, not reuse
    return calls["n"]


def _calls_in_a_clean_run(component: str, tmp_path) -> int:
    if component not in _CALLS:
        _CALLS[component] = _clean_calls(*COMPONENTS[component], tmp_path)
    return _CALLS[component]


@pytest.mark.parametrize("when", ["first", "middle", "last"])
@pytest.mark.parametrize("component", sorted(COMPONENTS))
def test_an_error_of_autotunes_own_never_reaches_the_training(
    component, when, tmp_path, monkeypatch, caplog
):
    total = _calls_in_a_clean_run(component, tmp_path)
    assert total > 0, f"{component} is never called: the list of call sites is out of date"
    nth = {"first": 1, "middle": max(1, total // 2), "last": total}[when]
    calls = _wrap(monkeypatch, *COMPONENTS[component], nth)
    with caplog.at_level("WARNING", logger="autotune"):
        batches, loader = _train(Slow(N), tmp_path, fake_clock=True)
    assert batches == _torch_batches(Slow(N))
    assert calls["n"] >= nth  # it raised
    report = _report(tmp_path)
    if loader.tuner_state.error is not None:  # raised where the guard runs it: tuning stopped
        assert f"injected into {COMPONENTS[component][1]}" in report
        assert sum("stopped tuning" in r.message for r in caplog.records) == 1


@pytest.mark.parametrize("when", ["first", "last"])
@pytest.mark.parametrize("name", ["add_to_epoch", "close_epoch"])
def test_whole_epoch_windows_raising_never_reach_the_training(name, when, tmp_path, monkeypatch):
    """A 600-step horizon over 32-step epochs: windows are whole epochs (ClimbSettings
    .whole_epochs), measured by calls the list above does not reach."""
    whole = {"online": {"max_explore_steps": 600}}
    total = _clean_calls(Measurement, name, tmp_path, **whole)
    assert total > 0
    _wrap(monkeypatch, Measurement, name, 1 if when == "first" else total)
    batches, loader = _train(Slow(N), tmp_path, fake_clock=True, **whole)
    assert batches == _torch_batches(Slow(N))
    assert f"injected into {name}" in loader.tuner_state.error
    assert f"injected into {name}" in _report(tmp_path)


def test_the_backlog_reader_raising_stops_tuning_only(tmp_path):
    loader = autotune.DataLoader(
        Slow(N),
        batch_size=BATCH,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
        online={**QUICK, "results_dir": str(tmp_path), "name": "t"},
    )
    loader._session.ready = lambda _it: 1 / 0
    batches = [b.tolist() for _ in range(EPOCHS) for b in loader]
    assert batches == _torch_batches(Slow(N))
    assert "ZeroDivisionError" in loader.tuner_state.error and "ZeroDivisionError" in _report(
        tmp_path
    )


def test_a_failing_set_up_leaves_torchs_loader(monkeypatch, tmp_path):
    monkeypatch.setattr(setup, "_new_session", lambda *a: 1 / 0)
    batches, loader = _train(Slow(N), tmp_path)
    assert batches == _torch_batches(Slow(N)) and not loader.tuner_state.exploring
    assert "set-up failed" in _report(tmp_path)


class FailsInWorker(Slow):
    """Raises in worker 1 only: in configurations of two workers or more, never in the script's."""

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id >= 1:
            raise OSError("No space left on device (/dev/shm)")
        return super().__getitem__(i)


class KilledInWorker(Slow):
    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id >= 1:
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer does
        return super().__getitem__(i)


class HangsInWorker(Slow):
    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id >= 1:
            time.sleep(30)
        return super().__getitem__(i)


@pytest.mark.parametrize(
    "dataset, message, kwargs",
    [
        (FailsInWorker, "OSError", {}),
        pytest.param(KilledInWorker, "exited unexpectedly", {}, marks=pytest.mark.slow),
        # torch takes a timeout with workers only: the script's own configuration has one.
        (HangsInWorker, "timed out", {"timeout": 1.0, "num_workers": 1}),
        # The script set no timeout (torch's default): the tuner's own candidates have one.
        (HangsInWorker, "timed out", {"online": {"candidate_timeout_s": 1.0}}),
    ],
)
def test_a_configuration_that_fails_is_marked_and_its_batches_replayed(
    dataset, message, kwargs, tmp_path
):
    batches, loader = _train(dataset(N), tmp_path, **kwargs)
    assert batches == _torch_batches(Slow(N))  # nothing lost, nothing doubled
    failed = loader.tuner_state.failed
    assert failed and all(label.startswith("w2") for label in failed)
    assert any(message in why for why in failed.values())
    assert loader.config.num_workers < 2
    assert "failed: " in _report(tmp_path)


class KilledHoldingTheDoneLock(Slow):
    """Worker 1 dies as a worker killed while it checks its done event (the OOM killer may strike
    then): holding the event's lock, which every worker takes for each index it gets."""

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id >= 1:
            done = [o for o in gc.get_objects() if type(o) is multiprocessing.synchronize.Event]
            assert len(done) == 1, "a worker holds one multiprocessing Event: its done event"
            done[0]._cond.acquire()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__getitem__(i)


@pytest.mark.slow
@pytest.mark.timeout(120)  # what this guards against is a hang
def test_a_worker_killed_holding_the_done_events_lock_fails_its_configuration_only(tmp_path):
    """torch marks a dead worker unavailable, then checks the done event under its lock, and a
    graceful shutdown sets it: either would wait for ever on the dead worker's lock."""
    batches, loader = _train(KilledHoldingTheDoneLock(N), tmp_path)
    assert batches == _torch_batches(Slow(N))
    failed = loader.tuner_state.failed
    assert failed and all(label.startswith("w2") for label in failed)


def test_a_hung_pool_is_killed_not_waited_on(tmp_path, monkeypatch):
    """A tuned configuration that timed out has a worker stuck in its dataset: torch's graceful
    shutdown would wait 5 s for each such worker, inside the training loop, before terminating
    it. The failed pool is killed instead (burst/teardown.py's forced release)."""
    released: list[bool] = []

    def release(loader, iterator=None, *, force=False):
        released.append(force)
        release_loader(loader, iterator, force=force)

    monkeypatch.setattr(session_module, "release_loader", release)
    batches, loader = _train(HangsInWorker(N), tmp_path, online={"candidate_timeout_s": 1.0})
    assert batches == _torch_batches(Slow(N))
    assert loader.tuner_state.failed and released and all(released)


class AlwaysFails(Slow):
    def __getitem__(self, i):
        if i == 13:
            raise ValueError("item 13 is corrupt")
        return super().__getitem__(i)


@pytest.mark.parametrize("workers", [0, 2])
def test_the_scripts_own_error_is_raised_as_torch_raises_it(workers, tmp_path):
    def first_error(make):
        try:
            for _ in make():
                pass
        except Exception as exc:  # noqa: BLE001
            return type(exc), str(exc).splitlines()[0]
        return None

    ours = first_error(
        lambda: autotune.DataLoader(
            AlwaysFails(N), batch_size=BATCH, num_workers=workers, online={"enabled": False}
        )
    )
    torchs = first_error(
        lambda: TORCH_DATALOADER(AlwaysFails(N), batch_size=BATCH, num_workers=workers)
    )
    assert ours == torchs and ours[0] is ValueError
    with pytest.raises(ValueError, match="item 13 is corrupt"):  # also while tuning
        _train(AlwaysFails(N), tmp_path, num_workers=workers)


def test_figures_not_measured_are_null_not_zero():
    from autotune.online.climb_types import ClimbSettings
    from autotune.online.finish import Outcome
    from autotune.online.meter import Ledger
    from autotune.space.config import LoaderConfig

    climb = HillClimb(LoaderConfig(), ("num_workers",), ClimbSettings(None, 2, False))
    outcome = Outcome.of(climb, Ledger(), {"name": "x"}, 4, torch.device("cpu"))
    m = outcome.measured
    assert (m.samples_per_s, m.baseline_samples_per_s, m.speedup, m.exploration_cost_s) == (
        None,
        None,
        None,
        None,
    )
    assert m.exploration_complete is False
    assert "n/a samples/s, speedup n/a over" in outcome.line and "0.0" not in outcome.line


def test_verify_says_n_a_where_nothing_was_recorded():
    from autotune.verify.model import Verification, VerifiedConfig

    tuned = VerifiedConfig(
        role="tuned",
        label="w2",
        params={},
        samples_per_s=[10.0],
        median=10.0,
        spread=0.0,
        recorded_samples_per_s=None,
    )
    v = Verification(
        recipe=None,
        workload="w",
        workload_name=None,
        device="cpu",
        usable_cpus=2,
        seconds=1,
        rounds=1,
        settle_s=1,
        tuned=tuned,
        defaults=None,
        recorded_samples_per_s=None,
        verified_samples_per_s=10.0,
        difference_pct=tuned.difference_pct,
        recorded_speedup=None,
        verified_speedup=None,
    )
    assert v.difference_pct is None and v.within_target is None
    assert any("difference: n/a" in line for line in v.summary_lines())
    assert "+0.0%" not in v.to_markdown()
