import os

import psutil
import pytest
import torch

from autotune.burst.runner import BurstSettings
from autotune.telemetry.host import is_mp_helper

# Short bursts keep the suite quick; figures are checked as bounds, never as exact timings.
QUICK = BurstSettings(min_steps=6, min_seconds=0.3, max_seconds=2.0, warmup_steps=1)


@pytest.fixture
def quick_burst() -> BurstSettings:
    return QUICK


@pytest.fixture
def cpu() -> torch.device:
    return torch.device("cpu")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    # No test reads or writes the user's memory of runs, and none starts from another test's
    # runs: tests of the memory give it a folder of their own (test_memory.py).
    monkeypatch.setenv("AUTOTUNE_MEMORY", "off")


@pytest.fixture(autouse=True)
def _fresh_loader_registry():
    """Each test's loaders start a process of their own: no name or choice of another test's."""
    from autotune.online import registry

    registry.reset()


# The children alive when the running test started: `children()` reports only those it made.
# Some tests leave DataLoader workers that their loaders' garbage collection ends later (a known
# leak between test files, not yet fixed); a later test's "no worker left behind" must not read
# them as its own.
_BEFORE_TEST: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before_the_test():
    _BEFORE_TEST.clear()
    _BEFORE_TEST.update(p.pid for p in _alive_children())


def _alive_children() -> list[psutil.Process]:
    return [
        p
        for p in psutil.Process(os.getpid()).children(recursive=True)
        if p.is_running() and p.status() != psutil.STATUS_ZOMBIE and not is_mp_helper(p)
    ]


def children() -> list[psutil.Process]:
    """This test's own children still alive (those made before it started left out)."""
    return [p for p in _alive_children() if p.pid not in _BEFORE_TEST]


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
