"""Shared by the benchmarks that compare variants of one script side by side: the variants run
alternated, the order reversed every other round (a drift of the machine's level then falls on
each alike), and an older checkout, where one is compared, is named by its commit."""

import subprocess
import sys
from pathlib import Path
from typing import Iterator, Mapping, Sequence, TypeVar

T = TypeVar("T")


def round_order(variants: Sequence[T], r: int) -> Sequence[T]:
    """Round `r`'s order (from 0): the variants as given, reversed on odd rounds."""
    return variants if r % 2 == 0 else variants[::-1]


def alternated(variants: Sequence[T], rounds: int) -> Iterator[T]:
    """Each variant once a round, the order reversed every other round."""
    for r in range(rounds):
        yield from round_order(variants, r)


def checkout_line(old: Path) -> str:
    """The output's line naming the older checkout a variant runs."""
    commit = subprocess.run(
        ["git", "-C", str(old), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"O: the checkout at {old}, commit {commit or 'unknown'}"


def run_python(
    script: Path, args: Sequence[str], env: Mapping[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """`python SCRIPT ARGS`, its output captured (a run past 10 minutes is a failure)."""
    return subprocess.run(
        [sys.executable, str(script), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )
