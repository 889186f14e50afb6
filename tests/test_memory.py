"""The memory of runs: its keys, its file (corrupted, foreign, written by two processes at once),
and the climb started from it on the policy's loop model (tests/test_online_policy.py): no clock,
no loader. Every test gives the memory a folder of its own (conftest turns it off elsewhere)."""

import json
import logging
import multiprocessing

import pytest

from autotune.decision.drift import DRIFT_FLOOR, EARLY_DRIFT
from autotune.memory import store
from autotune.memory.record import Entry, Source, Windows
from autotune.online.climb_types import Check, StopReason
from autotune.online.finish import Outcome, _rate
from autotune.online.measurement import Measurement
from autotune.online.memory import Memory, entry_key, note, restore, snapshot
from autotune.online.meter import Ledger
from autotune.online.options import TUNED, resolve
from autotune.online.policy import HillClimb
from autotune.space.config import LoaderConfig
from tests.test_online_policy import Loop, _settings

WORKLOAD = {
    "name": "Indices-loader",
    "dataset": "tests.Indices",
    "dataset_len": 1000,
    "batch_size": 32,
    "drop_last": False,
    "collate_fn": "torch.default_collate",
    "sampler": "torch.utils.data.sampler.RandomSampler",
    "transform": None,
}
STARVED = Loop(fetch_s=0.083, convoy=0.15)  # resolves at w5 pf8 (test_online_policy.py)


def _memory(tmp_path, run="run-1", workload=WORKLOAD) -> Memory:
    m = Memory.open(tmp_path, workload, cuda=False, ranks=1, run_id=run)
    assert m is not None
    return m


def _remembered(tmp_path, climb: HillClimb, run="run-1") -> Entry:
    memory = _memory(tmp_path, run)
    memory.save(snapshot(climb, str(climb.stop_reason)), "Indices-loader")
    entry = _memory(tmp_path, "run-next").entry
    assert entry is not None
    return entry


def _climb() -> HillClimb:
    return HillClimb(LoaderConfig(), TUNED, _settings())


# -- where, and the keys ------------------------------------------------------------------------


def test_the_memory_lives_in_the_user_cache_unless_moved_or_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("AUTOTUNE_MEMORY")
    assert store.where() == tmp_path / "cache" / "autotune" / "memory"
    monkeypatch.setenv("AUTOTUNE_MEMORY", str(tmp_path / "here"))
    assert store.where() == tmp_path / "here"
    assert store.where(tmp_path / "option") == tmp_path / "option"  # the option wins
    assert store.where(False) is None
    monkeypatch.setenv("AUTOTUNE_MEMORY", "off")
    assert store.where() is None
    assert resolve({"memory": "off"}).memory is False
    assert resolve({"memory": str(tmp_path)}).memory == tmp_path


def test_a_differing_workload_or_machine_is_a_new_entry(tmp_path):
    key = entry_key(WORKLOAD, cuda=False, ranks=1)
    assert entry_key(dict(WORKLOAD, name="another-name"), cuda=False, ranks=1) == key
    for change in (
        {"batch_size": 64},
        {"dataset_len": 999},
        {"transform": "Resize(10)"},
        {"collate_fn": "mine.collate"},
    ):
        assert store.path_of(
            tmp_path, entry_key({**WORKLOAD, **change}, False, 1)
        ) != store.path_of(tmp_path, key)
    two_ranks = entry_key(WORKLOAD, cuda=False, ranks=2)
    assert two_ranks["machine"]["ranks_per_node"] == 2
    assert store.path_of(tmp_path, two_ranks) != store.path_of(tmp_path, key)
    assert set(key["machine"]) == {"usable_cpus", "ranks_per_node", "gpu", "ram_gib"}


# -- the next run ---------------------------------------------------------------------------------


def test_a_finished_run_is_checked_then_kept_without_exploring(tmp_path):
    first = _climb()
    STARVED.run(first)
    assert first.stop_reason is StopReason.RESOLVED
    entry = _remembered(tmp_path, first)
    assert entry.runs == 1 and entry.exploring_finished
    second = _climb()
    assert restore(second, entry)
    assert second.current == first.best.config  # from step 0: no baseline at num_workers=0
    steps = STARVED.run(second)
    assert second.stop_reason is StopReason.REMEMBERED and second.reuse.check is Check.HELD
    assert second.current == first.current
    assert steps == second.reuse.check_steps < first.steps
    assert set(second.measured) == set(first.measured)  # nothing measured but the best
    for config, m in first.measured.items():
        extra = second.reuse.check_steps and m is first.best
        assert (
            len(second.measured[config].rates) >= len(m.rates)
            if extra
            else second.measured[config].rates == m.rates
        )
    text = note(second.reuse, 32)
    assert text.startswith(
        f"run 2 of this workload here: started at {second.reuse.label} (remembered), checked in"
    )
    assert text.endswith("no exploring")
    assert _remembered(tmp_path, second, run="run-2").runs == 2


def test_the_report_names_the_remembered_choice_as_it_was_chosen(tmp_path):
    first = _climb()
    STARVED.run(first)
    entry = _remembered(tmp_path, first)
    # A choice without persistence (an epoch long enough that a restart did not matter), restored
    # where the epoch's length is not known yet: it starts as chosen, and is named so.
    chosen = {**entry.chosen, "persistent_workers": False}
    second = _climb()
    assert restore(second, entry.model_copy(update={"chosen": chosen}))
    assert second._persistence(second.current).persistent_workers  # what re-deciding would say
    assert second.reuse.label == LoaderConfig.from_params(chosen).label()
    assert "persist" not in second.reuse.label


def test_an_unfinished_exploring_goes_on_where_it_stopped(tmp_path):
    whole = _climb()
    STARVED.run(whole)
    cut = _climb()
    STARVED.run(cut, limit=whole.steps // 2)
    assert cut.exploring
    entry = _remembered(tmp_path, cut)
    assert not entry.exploring_finished and entry.exploration_steps == cut.steps
    resumed = _climb()
    assert restore(resumed, entry)
    assert resumed.prior_steps == cut.steps  # the horizon counts the earlier run's exploring
    STARVED.run(resumed)
    assert resumed.reuse.check is Check.HELD and not resumed.exploring
    assert resumed.best.config == whole.best.config  # the same choice as one whole exploring
    measured_before = {c for c, m in cut.measured.items() if m.n >= 2}
    for config in measured_before - {cut.best.config}:  # not measured again
        assert resumed.measured[config].rates == cut.measured[config].rates
    assert resumed.steps < whole.steps
    assert "exploring went on from there" in note(resumed.reuse, 32)


@pytest.mark.parametrize("reason", [StopReason.BOUND, StopReason.RUN_END])
def test_an_exploring_cut_short_by_its_bound_goes_on_in_the_next_run(tmp_path, reason):
    """An exploring stopped before it had lost all its bound allows (here at half its steps) goes
    on in the next run where it stopped, with what is left of the bound and the horizon."""
    whole = _climb()
    STARVED.run(whole)
    cut = _climb()
    STARVED.run(cut, limit=whole.steps // 2)
    cut._stop(reason)
    assert not cut.exploring
    entry = _remembered(tmp_path, cut)
    assert not entry.exploring_finished
    resumed = _climb()
    assert restore(resumed, entry)
    STARVED.run(resumed)
    assert resumed.reuse.check is Check.HELD and resumed.stop_reason is StopReason.RESOLVED
    assert resumed.best.config == whole.best.config
    assert "exploring went on from there" in note(resumed.reuse, 32)


def test_the_bound_spans_runs_a_run_that_spent_it_leaves_the_next_one_nothing_to_explore(tmp_path):
    """Run 1 lost all its bound allows and stopped there; run 2 checks the remembered best and
    explores no further (its exploring would otherwise cost a second bound); a larger bound, as
    --max-explore-share gives it, lets the next run go on."""
    tight = dict(epoch_steps=600, bound_share=0.01)
    first = HillClimb(LoaderConfig(), TUNED, _settings(**tight))
    STARVED.run(first)
    assert first.stop_reason is StopReason.BOUND
    entry = _remembered(tmp_path, first)
    assert not entry.exploring_finished
    assert entry.exploration_cost_s > 0
    assert entry.exploration_cost_s == pytest.approx(first.exploration_cost_s())
    second = HillClimb(LoaderConfig(), TUNED, _settings(**tight))
    assert restore(second, entry) and second.prior_cost_s == entry.exploration_cost_s
    steps = STARVED.run(second)
    r = second.reuse
    assert r.check is Check.HELD and r.bound_spent and second.stop_reason is StopReason.BOUND
    assert steps == r.check_steps  # the check, then the remembered best: nothing else measured
    assert second.best.config == first.best.config and second.current == first.choice_so_far()
    assert {c for c, m in second.measured.items() if m.n} == {
        c for c, m in first.measured.items() if m.n
    }
    said = note(r, 32)
    assert said.endswith("no exploring: the earlier runs' exploring had lost all its bound allows")
    wider = HillClimb(LoaderConfig(), TUNED, _settings(epoch_steps=600, bound_share=0.1))
    assert restore(wider, entry)
    STARVED.run(wider)
    assert not wider.reuse.bound_spent and "exploring went on from there" in note(wider.reuse, 32)
    assert len([m for m in wider.measured.values() if m.n]) > len(
        [m for m in first.measured.values() if m.n]
    )


def test_a_run_at_a_level_of_its_own_within_the_drift_floor_keeps_the_memory(tmp_path):
    """A run 17% slower than the one remembered, nothing else changed (the spread of whole runs
    of one configuration on a shared machine), is no drift: exploring does not start again."""
    first = _climb()
    STARVED.run(first)
    entry = _remembered(tmp_path, first)
    again = _climb()
    assert restore(again, entry)
    Loop(fetch_s=0.083, convoy=0.15, step_s=0.024).run(again)
    r = again.reuse
    assert r.check is Check.HELD and r.rate / r.remembered_rate < 0.9
    assert r.band == DRIFT_FLOOR and again.stop_reason is StopReason.REMEMBERED


def test_the_remembered_windows_are_read_at_this_runs_level(tmp_path):
    """Run 2 runs everything 15% slower (a run's own level, within the drift floor): the
    remembered windows are scaled by the check's ratio, so the plan's verdicts stand and it ends
    where one whole exploring at this level would."""
    slower = Loop(fetch_s=0.083 * 1.15, convoy=0.15, step_s=0.020 * 1.15)
    whole = _climb()
    slower.run(whole)
    cut = _climb()
    STARVED.run(cut, limit=whole.steps // 2)
    entry = _remembered(tmp_path, cut)
    resumed = _climb()
    assert restore(resumed, entry)
    slower.run(resumed)
    r = resumed.reuse
    assert r.check is Check.HELD and r.rate / r.remembered_rate == pytest.approx(1 / 1.15, rel=0.02)
    level = r.rate / r.remembered_rate
    for config, m in cut.measured.items():
        if m.n and config != cut.best.config:
            assert resumed.measured[config].rates[: len(m.rates)] == pytest.approx(
                [x * level for x in m.rates]
            )
    assert resumed.best.config == whole.best.config


def test_an_exploring_ended_by_the_horizon_over_the_runs_stays_ended(tmp_path):
    cut = _climb()
    STARVED.run(cut, limit=40)
    cut._stop(StopReason.EPOCH_END)
    assert _remembered(tmp_path, cut).exploring_finished


def test_a_drifted_workload_starts_exploring_again_and_says_why(tmp_path):
    first = _climb()
    STARVED.run(first)
    entry = _remembered(tmp_path, first)
    slower = Loop(fetch_s=0.25, convoy=0.15)  # the same items, made three times slower
    again = _climb()
    assert restore(again, entry)
    STARVED_STEPS = slower.run(again, limit=10_000)
    assert again.reuse.check is Check.DRIFTED
    assert again.start == first.best.config  # the climb goes on from the configuration running
    assert again.best.config.num_workers > first.best.config.num_workers
    assert STARVED_STEPS > again.reuse.check_steps
    text = note(again.reuse, 32)
    assert "but it ran at" in text and text.endswith("exploring started again")


def test_on_short_epochs_a_gross_drift_is_read_within_the_first_epoch(tmp_path):
    short = dict(epoch_steps=16)  # windows are whole epochs: the check's close in its third
    first = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    STARVED.run(first, epoch=16)
    entry = _remembered(tmp_path, first)
    same = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(same, entry)
    STARVED.run(same, epoch=16)
    assert same.reuse.check is Check.HELD and same.reuse.check_steps > 16  # whole epochs
    slower = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(slower, entry)
    Loop(fetch_s=0.25, convoy=0.15).run(slower, epoch=16)
    assert slower.reuse.check is Check.DRIFTED and slower.reuse.check_steps <= 16
    text = note(slower.reuse, 32)
    # the remembered rate as remembered; the early read against the best's own steady steps
    assert f"(remembered at {slower.reuse.remembered_rate * 32:.1f} samples/s" in text
    assert text.endswith("exploring started again") and "the remembered best's steady steps" in text
    # cut short after the restart: the next run starts from what this one measured
    slower_loop = Loop(fetch_s=0.25, convoy=0.15)
    cut = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    restore(cut, entry)
    slower_loop.run(cut, epoch=16, limit=20)
    assert cut.reuse.check is Check.DRIFTED and cut.best.n == 1  # its first steps, as a window
    after = _remembered(tmp_path, cut, run="run-cut")
    third = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(third, after) and third.current == cut.choice_so_far()


def test_a_slower_fetch_hidden_by_the_batches_in_flight_is_read_from_the_start_up(tmp_path):
    """Where the pool's batches in flight fill a short epoch, its steps hand out batches fetched
    during the start-up and read the loop's own step at any item speed: the first batch's fetch
    shows the drift, within the first epoch."""
    short = dict(epoch_steps=16)
    first = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    STARVED.run(first, epoch=16)
    entry = _remembered(tmp_path, first)
    hidden = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(hidden, entry) and hidden.reuse.remembered_startup_s == STARVED.startup_s
    Loop(fetch_s=0.083, convoy=0.15, startup_s=0.8).run(hidden, epoch=16)  # the same steps
    r = hidden.reuse
    assert r.check is Check.DRIFTED and r.slow_start and r.check_steps <= 16
    assert hidden.start == first.best.config and hidden.measured[hidden.start].startup_s == 0.8
    text = note(r, 32)
    assert "steps its workers took 0.80 s to their first batch, against 0.05 s remembered" in text
    assert text.endswith("exploring started again")
    # a start-up somewhat slower, within the early band: the full check reads the same steps
    near = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(near, entry)
    Loop(fetch_s=0.083, convoy=0.15, startup_s=0.15).run(near, epoch=16)
    assert near.reuse.check is Check.HELD and not near.reuse.slow_start


def test_a_faster_first_window_is_left_to_the_full_check(tmp_path):
    """A first window reading high (a warm page cache) does not restart exploring on its own: a
    speed-up is judged over the check's windows, a slowdown already on its first."""
    short = dict(epoch_steps=16)
    slow_step = Loop(fetch_s=0.01, convoy=0.15, step_s=0.05)
    first = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    slow_step.run(first, epoch=16)
    entry = _remembered(tmp_path, first)
    faster = HillClimb(LoaderConfig(), TUNED, _settings(**short))
    assert restore(faster, entry)
    Loop(fetch_s=0.01, convoy=0.15, step_s=0.02).run(faster, epoch=16)  # a 2.5x faster step
    r = faster.reuse
    assert r.early_read and r.check is Check.DRIFTED
    assert r.band != EARLY_DRIFT and r.check_steps > 16  # read by the full check, not the first


def _tune_recipe(chosen: LoaderConfig) -> Entry:
    """What `autotune tune` leaves in the memory: its choice, with no windows of the loop's."""
    return Entry(
        key=entry_key(WORKLOAD, False, 1),
        source=Source.TUNE,
        runs=1,
        chosen=chosen.as_dict(),
        exploring_finished=True,
        measured=[Windows(config=chosen.as_dict())],
        tuned_samples_per_s=900.0,
    )


def test_a_recipe_of_autotune_tune_starts_the_run_without_a_check_against_its_rate(tmp_path):
    chosen = LoaderConfig(num_workers=4, prefetch_factor=4, persistent_workers=True)
    entry = _tune_recipe(chosen)
    climb = _climb()
    assert restore(climb, entry) and climb.current == chosen
    STARVED.run(climb)
    assert climb.reuse.check is Check.UNCHECKED and climb.stop_reason is StopReason.REMEMBERED
    assert "autotune tune's recipe" in note(climb.reuse, 32)


def test_the_worker_range_holds_a_remembered_choice_above_its_first_top(tmp_path):
    # A recipe measured on more workers than this run's first top (4 per usable CPU): the report's
    # range must not read "0-8" beside a best of 11.
    entry = _tune_recipe(LoaderConfig(num_workers=11, prefetch_factor=1, persistent_workers=True))
    climb = _climb()
    assert climb.range.top < 11
    assert restore(climb, entry) and climb.range.top == 11


# -- the file -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,said",
    [
        ("{not json", "not JSON"),
        ('{"autotune_memory": 7, "key": {}}', "not a version-1 memory entry"),
        ('{"autotune_memory": 1, "key": {"workload": {}, "machine": {}}}', "another workload"),
        ('{"autotune_memory": 1, "key": 3}', "key"),
    ],
)
def test_a_corrupted_or_foreign_file_is_one_warning_and_tuning_goes_on(
    tmp_path, caplog, text, said
):
    key = entry_key(WORKLOAD, False, 1)
    path = store.path_of(tmp_path, key)
    path.write_text(text)
    with caplog.at_level(logging.WARNING, logger="autotune"):
        memory = _memory(tmp_path)
    assert memory.entry is None
    [record] = caplog.records
    assert said in record.getMessage() and "\n" not in record.getMessage()
    climb = _climb()
    STARVED.run(climb)
    memory.save(snapshot(climb, None), "Indices-loader")  # the next write replaces it
    assert _memory(tmp_path, "later").entry.runs == 1


def _update_many(folder: str, run: str, n: int) -> None:
    key = entry_key(WORKLOAD, False, 1)
    for i in range(n):

        def change(entry, i=i):
            runs = (entry.runs if entry else 0) + 1
            return Entry(
                key=key,
                runs=runs,
                last_run=f"{run}-{i}",
                measured=[Windows(config=LoaderConfig().as_dict(), rates=[float(i)] * 50)],
            )

        store.update(store.Path(folder), key, change)


def test_two_processes_writing_at_once_lose_no_update_and_leave_a_whole_file(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_update_many, args=(str(tmp_path), f"rank{r}", 40)) for r in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    entry = store.load(tmp_path, entry_key(WORKLOAD, False, 1))
    assert entry is not None and entry.runs == 80
    assert not list(tmp_path.glob("*.tmp"))  # no temporary file left behind
    json.loads(store.path_of(tmp_path, entry_key(WORKLOAD, False, 1)).read_text())


def test_list_and_clear(tmp_path):
    _update_many(str(tmp_path), "one", 1)
    assert len(store.entries(tmp_path)) == 1
    assert store.clear(tmp_path) == 1 and store.entries(tmp_path) == []


# -- the report -----------------------------------------------------------------------------------


def test_a_report_never_names_a_best_without_its_rate():
    best = Measurement(
        LoaderConfig(num_workers=3, prefetch_factor=2, persistent_workers=True),
        rates=[10.0, 11.0],
        spans=[1.0, 1.0],
    )
    best.remeasure()  # the winner's curse: measured again, no fresh window yet
    assert best.n == 0 and _rate(best, 32) == pytest.approx(336.0)
    climb = _climb()
    STARVED.run(climb, limit=60)
    outcome = Outcome.of(climb, Ledger(), WORKLOAD, 32, device=__import__("torch").device("cpu"))
    assert "n/a samples/s" not in outcome.line


# -- through autotune.DataLoader (real workers; nothing timed) ------------------------------------


def test_the_next_process_starts_where_the_last_one_left_off(tmp_path):
    from online_fakes import Indices

    import autotune
    from autotune.online import registry

    def train():
        loader = autotune.DataLoader(
            Indices(240),
            batch_size=8,
            shuffle=True,
            online={"memory": str(tmp_path), "results_dir": None, "max_workers": 2},
        )
        for _ in range(2):
            seen = sorted(i for batch in loader for i in batch.tolist())
            assert seen == list(range(240))  # every item once an epoch, memory or not
        loader.write_results()
        return loader

    first = train()
    [(_, entry)] = store.entries(tmp_path)
    assert entry is not None and entry.runs == 1 and entry.name == first._session.outbox.name
    registry.reset()  # a new process
    second = train()
    reuse = second._session.policy.reuse
    assert reuse is not None and reuse.run == 2
    assert reuse.label == LoaderConfig.from_params(entry.chosen).label()
    s = second._session
    outcome = s.outbox.outcome or s._interim()
    assert "run 2 of this workload here" in outcome.line
    assert outcome.measured.memory and store.entries(tmp_path)[0][1].runs == 2


def test_autotune_memory_lists_and_clears(tmp_path):
    from typer.testing import CliRunner

    from autotune.cli.app import app

    _update_many(str(tmp_path), "one", 1)
    shown = CliRunner().invoke(
        app, ["memory", "list", "--memory", str(tmp_path)], env={"COLUMNS": "250"}
    )
    assert shown.exit_code == 0 and "tests.Indices" in shown.output
    cleared = CliRunner().invoke(app, ["memory", "clear", "--memory", str(tmp_path)])
    assert cleared.exit_code == 0 and "1 entries cleared" in cleared.output
    assert store.entries(tmp_path) == []


def test_autotune_run_memory_reaches_the_script_as_an_option(tmp_path):
    from autotune.cli.run_cmd import child_environment
    from autotune.online.options import ENV_VAR

    for given, expected in (("off", False), (str(tmp_path), str(tmp_path))):
        env = child_environment(resolve({"memory": given}), {})
        assert json.loads(env[ENV_VAR])["memory"] == expected
        assert resolve(None, env).memory == (False if expected is False else tmp_path)


def test_a_recipe_of_autotune_tune_is_found_by_the_training_of_its_workload(tmp_path):
    import torch.utils.data
    from online_fakes import Indices

    import autotune
    from autotune.online.memory import remember_recipe
    from autotune.online.workload import describe
    from autotune.recipe.model import Measured, Recipe

    chosen = LoaderConfig(num_workers=2, prefetch_factor=4)
    recipe = Recipe.from_config(
        chosen,
        measured=Measured(samples_per_s=500.0, baseline_samples_per_s=100.0, speedup=5.0),
        workload={},
        environment={},
    )
    dataset = Indices(64)
    tuned_on = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True)  # as tune makes it
    path = remember_recipe(tuned_on, recipe, "indices", cuda=False, option=tmp_path)
    assert path is not None and path.is_file()
    training = autotune.DataLoader(
        dataset, batch_size=8, shuffle=True, online={"results_dir": None}
    )
    memory = Memory.open(
        tmp_path, describe(training, "Indices-training"), cuda=False, ranks=1, run_id="training"
    )
    assert memory.entry is not None and memory.entry.source is Source.TUNE
    assert LoaderConfig.from_params(memory.entry.chosen) == chosen
    other = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True)
    assert Memory.open(tmp_path, describe(other, "x"), False, 1, "r").entry is None


def _picked_among(rate: float, ties: int) -> Entry:
    """A finished exploring whose best (w5 pf8, STARVED's) was picked at `rate` batches/s over
    2 noisy windows and never measured again; `ties` rivals at its rate, and the start far
    slower."""
    best = LoaderConfig(num_workers=5, prefetch_factor=8, persistent_workers=True)
    rivals = [
        LoaderConfig(num_workers=w, prefetch_factor=8, persistent_workers=True) for w in (4, 6, 3)
    ][:ties]
    windows = [Windows(config=best.as_dict(), rates=[rate * 1.08, rate * 0.92], spans=[1, 1])]
    windows += [
        Windows(config=c.as_dict(), rates=[rate * 1.04, rate * 0.94], spans=[1, 1]) for c in rivals
    ]
    windows.append(Windows(config=LoaderConfig().as_dict(), rates=[rate / 4], spans=[1]))
    return Entry(
        key=entry_key(WORKLOAD, False, 1),
        runs=1,
        start=LoaderConfig().as_dict(),
        chosen=best.as_dict(),
        exploring_finished=True,
        measured=windows,
    )


def test_a_best_picked_among_ties_is_checked_against_its_rate_less_the_pick(tmp_path):
    """Its remembered rate reads high by the pick (the winner's curse): a check 26% below it
    holds where two rivals tied with it, and is a drift where none did. Once held, the next run
    reads its windows at the checked level, with no bias left."""
    first = _climb()
    STARVED.run(first)
    true = first.best.mean
    assert first.best.config == LoaderConfig(
        num_workers=5, prefetch_factor=8, persistent_workers=True
    )
    remembered = true / (1 - DRIFT_FLOOR - 0.01)
    tied = _climb()
    assert restore(tied, _picked_among(remembered, ties=2))
    assert tied.reuse.selection_bias > 0.02
    STARVED.run(tied)
    r = tied.reuse
    assert r.check is Check.HELD and r.rate / r.remembered_rate < 1 - DRIFT_FLOOR
    assert r.against == pytest.approx(r.remembered_rate * (1 - r.selection_bias))
    assert "its pick among ties reads high" in note(r, 32)
    alone = _climb()
    assert restore(alone, _picked_among(remembered, ties=0))
    assert alone.reuse.selection_bias == 0.0
    STARVED.run(alone)
    assert alone.reuse.check is Check.DRIFTED
    again = _climb()
    assert restore(again, _remembered(tmp_path, tied))
    assert again.reuse.selection_bias == 0.0  # checked: at the check's level now


# -- the rate the check compares with: the choice's after exploring ------------------------------

# STARVED where a pool started by a switch delivers 12% faster for its first 230 steps.
BOOSTED = Loop(fetch_s=0.083, convoy=0.15, boost=0.12)


def test_the_check_compares_with_the_choices_rate_after_exploring(tmp_path):
    """Run 1 chose on windows read just after its switches; over the rest of the run its choice
    ran at its steady rate, which run 2's check, from step 0, reads too: like with like."""
    first = _climb()
    BOOSTED.run(first, after=1500)
    settled = first.settled
    assert settled is not None and settled.config == first.current
    assert settled.n >= first.settings.min_windows
    assert settled.mean < 0.95 * first.best.mean  # the choice's windows read in the boost
    entry = _remembered(tmp_path, first)
    assert entry.settled is not None and entry.settled.rates == settled.rates
    second = _climb()
    assert restore(second, entry)
    r = second.reuse
    assert r.remembered_rate == pytest.approx(settled.mean)
    assert r.settled_steps == settled.steady_steps and r.selection_bias == 0.0
    BOOSTED.run(second)
    assert r.check is Check.HELD and second.stop_reason is StopReason.REMEMBERED
    assert r.rate / r.remembered_rate == pytest.approx(1.0, abs=0.03)
    assert r.rate / first.best.mean < 0.92  # what the windows that chose it would have said
    assert f"over {settled.steady_steps} steps after exploring" in note(r, 32)


def test_a_run_too_short_after_exploring_remembers_the_windows_that_chose(tmp_path):
    first = _climb()
    BOOSTED.run(first, after=3)
    assert first.settled is not None and first.settled.n < first.settings.min_windows
    entry = _remembered(tmp_path, first)
    assert entry.settled is None
    second = _climb()
    assert restore(second, entry)
    assert second.reuse.settled_steps is None
    assert second.reuse.remembered_rate == pytest.approx(first.best.mean)


def test_a_settled_rate_is_kept_by_a_run_whose_check_held_and_dropped_on_a_drift(tmp_path):
    first = _climb()
    BOOSTED.run(first, after=1500)
    entry = _remembered(tmp_path, first)
    held = _climb()
    assert restore(held, entry)
    BOOSTED.run(held)  # ends with its check: no settled windows of its own
    kept = _remembered(tmp_path, held, run="run-2")
    assert kept.settled == entry.settled
    drifted = _climb()
    assert restore(drifted, kept)
    Loop(fetch_s=0.25, convoy=0.15).run(drifted)
    assert drifted.reuse.check is Check.DRIFTED
    r = drifted.reuse
    remembered = (
        f"{r.remembered_rate * 8:.1f} samples/s over {r.settled_steps} steps after exploring"
    )
    assert f"remembered at {remembered}" in note(r, 8)  # the unit with the rate, then its steps
    assert _remembered(tmp_path, drifted, run="run-3").settled is None


def test_the_memory_is_written_again_at_exit_with_the_rate_after_exploring(tmp_path):
    """The outcome is published where exploring ends; the settled windows come after it, and
    the exit's write keeps them."""
    import torch

    from autotune.online.finish import Outbox

    climb = _climb()
    explored = STARVED.run(climb)
    outbox = Outbox(results_dir=None, name="Indices-loader", memory=_memory(tmp_path))
    outbox.publish(Outcome.of(climb, Ledger(), WORKLOAD, 32, torch.device("cpu")))
    [(_, entry)] = store.entries(tmp_path)
    assert entry.settled is None
    STARVED.run(climb, after=600, start=explored)
    outbox.at_exit()
    [(_, entry)] = store.entries(tmp_path)
    assert entry.settled is not None and entry.settled.rates == climb.settled.rates
    assert entry.runs == 1  # one run, written twice


def test_the_rate_after_exploring_is_kept_in_a_bounded_number_of_windows(tmp_path):
    """A long training measures its choice after exploring only until SETTLED_WINDOWS windows:
    the steps after them cost nothing, and the memory's entry does not grow with the run."""
    from autotune.online.policy import SETTLED_WINDOWS

    climb = _climb()
    STARVED.run(climb, after=20_000)
    settled = climb.settled
    assert settled is not None and len(settled.rates) == SETTLED_WINDOWS
    assert settled.steps < 20_000
    assert len(_remembered(tmp_path, climb).settled.rates) == SETTLED_WINDOWS
