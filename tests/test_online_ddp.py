"""Every rank, one decision: two DDP ranks on the CPU (gloo), started by torchrun, mp.spawn and
Lightning, each under `autotune run` with nothing of autotune in the script
(tests/frameworks/ddp_train.py). Training completes, both ranks end on one configuration, each
sized its workers for its share of the node, and one run folder is written."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch
from script_runs import (
    FRAMEWORKS,
    autotune_run_command,
    output_tail,
    reports_of_every_loader,
    torchrun_command,
)

from autotune.space.cpus import usable_cpus
from autotune.space.space import max_workers_for

SCRIPT = FRAMEWORKS / "ddp_train.py"


LAUNCHES = {
    "torchrun": lambda: torchrun_command(SCRIPT, "torchrun"),
    "mp.spawn": lambda: [sys.executable, str(SCRIPT), "spawn"],
    "lightning": lambda: [sys.executable, str(SCRIPT), "lightning"],
}


@pytest.mark.slow
@pytest.mark.parametrize("launch", sorted(LAUNCHES))
def test_two_ranks_explore_in_lockstep_and_end_on_one_configuration(launch, tmp_path):
    results = tmp_path / "results"
    command = autotune_run_command(results, "x")[:-2] + LAUNCHES[launch]() + ["3200", "2"]
    # The whole horizon may go to exploring: a spawned pool's start (each worker a fresh
    # interpreter importing torch) can take the default bound's 10% on a loaded machine, and the
    # climb would then keep its start at num_workers=0 before the candidate's windows were in
    # (seen once in CI under mp.spawn). What this test checks is the ranks' one decision.
    command[command.index("--") : command.index("--")] = ["--max-explore-share", "1"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, output_tail(done)
    configs = dict(re.findall(r"^RANK (\d) CONFIG (.+)$", done.stdout, re.MULTILINE))
    assert set(configs) == {"0", "1"}, output_tail(done)
    assert configs["0"] == configs["1"], configs  # one decision for both ranks
    (recipe,) = reports_of_every_loader(results, least=1)  # one rank wrote
    env = recipe.environment
    assert env["ranks_per_node"] == 2  # found as the launcher set them, even where none says
    assert env["usable_cpus"] == max(1, usable_cpus(ranks=1).count // 2)  # the node's CPUs shared
    assert recipe.measured.trials >= 2 and recipe.measured.exploration_steps > 0
    # The attribute reads the workers running (it read 0 throughout), within the range this
    # rank's share of the node started at, or grew to on measured gains.
    workers = int(re.match(r"w(\d+) ", configs["0"]).group(1))
    m = recipe.measured
    started_at = m.worker_range_grown_from or m.max_workers_searched
    assert started_at == max_workers_for(env["usable_cpus"])
    assert 1 <= workers <= m.max_workers_searched, (configs, m)


@pytest.mark.slow
def test_a_rank_that_stops_iterating_never_holds_the_others(tmp_path):
    """The leader stops iterating mid-exploration; the follower trains every epoch to the end on
    its own configuration (its waits for the leader are bounded), and the script ends."""
    command = autotune_run_command(tmp_path / "results", "x")[:-2] + torchrun_command(
        SCRIPT, "torchrun-leader-stops", "3200", "3"
    )
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, output_tail(done)
    seen = {
        r: (int(n), int(per))
        for r, n, per in re.findall(
            r"^RANK (\d) BATCHES (\d+) OF (\d+)$", done.stdout, re.MULTILINE
        )
    }
    assert seen["0"][0] == 6, output_tail(done)
    assert seen["1"][0] == 3 * seen["1"][1], output_tail(done)  # every batch of every epoch


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2,
    reason="NCCL ranks need a GPU each: two GPUs",
)
def test_two_nccl_ranks_explore_in_lockstep_and_end_on_one_configuration(tmp_path):
    """The NCCL path: one GPU per rank, torchrun, the loader tuned with pin_memory in its space."""
    results = tmp_path / "results"
    command = autotune_run_command(results, "x")[:-2] + torchrun_command(
        SCRIPT, "torchrun-nccl", "3200", "2"
    )
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, output_tail(done)
    configs = dict(re.findall(r"^RANK (\d) CONFIG (.+)$", done.stdout, re.MULTILINE))
    assert set(configs) == {"0", "1"} and configs["0"] == configs["1"], output_tail(done)
    (recipe,) = reports_of_every_loader(results, least=1)
    assert recipe.environment["ranks_per_node"] == 2
