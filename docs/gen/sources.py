"""Where a committed figure comes from: each results file's command, commit, date and machine,
read the same way whatever wrote the file (a bench report, `autotune overhead`, a GPU script's
`provenance` block, a recipe)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Source:
    path: str  # relative to the repository root
    command: str
    commit: str
    date: str
    machine: str
    historical: str | None

    def link(self, page_dir: str = "benchmarks") -> str:
        """The file, relative to a page in docs/`page_dir`: it opens in the repository view."""
        return "../" * (len(Path(page_dir).parts) + 1) + self.path

    def stamp(self, page_dir: str = "benchmarks") -> str:
        """The line under every figure: what ran, when, where, on which commit, from which file."""
        mark = " **Historical record.**" if self.historical else ""
        return (
            f"*Measured {self.date} on {self.machine}, commit `{self.commit}`:"
            f" `{self.command}` — [`{self.path}`]({self.link(page_dir)}).*{mark}"
        )


def _machine(env: dict[str, Any]) -> str:
    gpu = env.get("gpu") or "no GPU"
    return (
        f"{env.get('hostname', '?')} ({env.get('usable_cpus', '?')} usable CPUs, {gpu},"
        f" torch {env.get('torch', '?')})"
    )


def _git_commit(path: Path) -> str:
    """The commit that added a file that does not record its own (a recipe)."""
    out = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "log",
            "--diff-filter=A",
            "--format=%h",
            "--",
            str(path.relative_to(ROOT)),
        ],
        capture_output=True,
        text=True,
    )
    found = out.stdout.split()
    return f"{found[-1]} (git history)" if found else "not recorded"


def read(path: Path) -> tuple[Source, Any]:
    """The file's provenance and its data."""
    data = json.loads(path.read_text())
    rel = str(path.relative_to(ROOT))
    if isinstance(data, dict) and "provenance" in data:
        p = data["provenance"]
        return Source(
            rel, p["command"], p["commit"], p["date"], p["machine"], p.get("historical")
        ), data
    if isinstance(data, dict) and "autotune_recipe" in data:  # a committed example recipe
        env = data.get("environment", {})
        return Source(
            rel,
            f"autotune tune{' --device cuda' if env.get('gpu') else ''}",
            _git_commit(path),
            data["created"][:16].replace("T", " ") + " UTC",
            _machine(env),
            f"An example recipe, written {data['created'][:10]}.",
        ), data
    created = str(data.get("created", "not recorded"))[:16].replace("T", " ")
    return Source(
        rel,
        data["command"].strip(),
        data.get("commit") or "not recorded",
        f"{created} UTC",
        _machine(data.get("environment", {})),
        data.get("historical"),
    ), data


def all_results() -> list[Path]:
    return sorted((ROOT / "results").rglob("*.json"))
