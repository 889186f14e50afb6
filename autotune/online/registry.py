"""What the loaders of one process know of each other: their names (two reports never share
one), the choice tuning made for a workload (a loader re-created for it reuses the choice, as
transformers re-creates its evaluation loader at every evaluation), the latest training choice
(evaluation loaders run on it), the loaders that may run at once (they share the CPUs), and which
loader handed out the last batch (time spent in another loader is no step of this one's)."""

from __future__ import annotations

import ast
import functools
import linecache
import os
import re
import sys
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Hashable

import torch
from torch.utils.data import SequentialSampler

from autotune.space.config import LoaderConfig

_AUTOTUNE = str(Path(__file__).resolve().parents[1])
_TORCH = str(Path(torch.__file__).resolve().parent)
EVALUATION_WORDS = ("val", "eval", "test", "predict", "infer")
# How far up the stack a training framework's loader-making method is looked for.
STACK_DEPTH = 12


@dataclass
class Choice:
    config: LoaderConfig
    name: str  # the loader whose tuning made it


@dataclass
class Registry:
    names: dict[str, Hashable] = field(default_factory=dict)  # name -> its workload's identity
    choices: dict[Hashable, Choice] = field(default_factory=dict)  # identity -> tuning's choice
    training: Choice | None = None  # the latest choice of a loader tuned as a training loader
    shuffling: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    active: int | None = None  # id() of the session that handed out the last batch
    generations: dict[str, int] = field(default_factory=dict)  # loaders made under each name
    # a name's run folder: a loader re-created under the same name (an evaluation loader made
    # anew at each evaluation, as transformers' get_eval_dataloader does) rewrites its folder.
    folders: dict[tuple[str, str], Path] = field(default_factory=dict)  # (results dir, name)
    pid: int = field(default_factory=os.getpid)
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])  # this run, in the memory

    def name(self, base: str, identity: Hashable) -> str:
        """`base`, made distinct from the names other workloads took in this process; a loader
        re-created for the same workload keeps its name."""
        name, n = base, 1
        while self.names.get(name, identity) != identity:
            n += 1
            name = f"{base}-{n}"
        self.names[name] = identity
        return name

    def generation(self, name: str) -> int:
        """How many loaders named `name` joined their ranks before this one: every rank makes its
        loaders in the same order, so (name, generation) names the same loader on each."""
        n = self.generations.get(name, 0)
        self.generations[name] = n + 1
        return n

    def decided(self, identity: Hashable, choice: Choice, training: bool) -> None:
        self.choices[identity] = choice
        if training:
            self.training = choice

    def cpu_share(self, loader: Any, usable: int) -> int:
        """The CPUs one of the shuffling loaders alive may size its workers for: they may run at
        once (a GAN's two loaders); an evaluation loader runs between them on the training
        choice."""
        return max(1, usable // max(1, len([x for x in self.shuffling if x is not loader]) + 1))


_REGISTRY = Registry()


def registry() -> Registry:
    """This process's registry (a forked worker starts none of its own: it makes no loaders)."""
    global _REGISTRY
    if _REGISTRY.pid != os.getpid():
        _REGISTRY = Registry()
    return _REGISTRY


def reset() -> None:
    """A fresh registry: a new process's (tests, and each training of `bench --online`)."""
    global _REGISTRY
    _REGISTRY = Registry()


def sequential(loader: Any) -> bool:
    """The loader visits its items in order, as evaluation does (no shuffle): torch's
    SequentialSampler, or a DistributedSampler with shuffle off."""
    sampler = (
        loader.sampler
        if loader.batch_sampler is None
        else getattr(loader.batch_sampler, "sampler", loader.sampler)
    )
    return isinstance(sampler, SequentialSampler) or getattr(sampler, "shuffle", None) is False


@dataclass(frozen=True)
class CallSite:
    variable: str | None  # what the script assigns the loader to
    role: str | None  # a loader-making method's name up the stack (train_dataloader, ...)
    where: str | None  # file:line of the first frame outside torch and autotune


SAYS_WHAT_FOR = r"train|val|eval|test|predict"


def _telling(names: list[str]) -> str | None:
    """The first name that says what for (train_loader, get_eval_dataloader), else the first."""
    return next(
        (n for n in names if re.search(SAYS_WHAT_FOR, n.lower())), names[0] if names else None
    )


def call_site() -> CallSite:
    """Where the loader being constructed was made: read off the stack, no source executed. A
    factory's own variable (timm's create_loader assigns `loader` for both) says less than its
    caller's (`loader_train`, `loader_eval`): the names up the stack are read, the telling one
    wins."""
    frame: FrameType | None = sys._getframe(1)
    where = None
    variables: list[str] = []
    roles: list[str] = []
    depth = 0
    while frame is not None and depth < STACK_DEPTH:
        filename = frame.f_code.co_filename
        if not filename.startswith((_AUTOTUNE, _TORCH)):
            depth += 1
            where = where or f"{Path(filename).stem}:{frame.f_lineno}"
            assigned = _assigned(filename, frame.f_lineno)
            if assigned is not None:
                variables.append(assigned)
            name = frame.f_code.co_name
            if "dataloader" in name.lower():  # Lightning's train_dataloader, HF's get_*_dataloader
                roles.append(name)
        frame = frame.f_back
    return CallSite(_telling(variables), _telling(roles), where)


def _assigned(filename: str, line: int) -> str | None:
    """The name that the assignment statement spanning `line` assigns (`train_loader = ...`,
    `self.loader: DataLoader = ...`), where the source is readable. The whole statement counts:
    a formatter puts a call wrapped in another one (`loader = prepare(\n    DataLoader(...))`) on
    a line of its own, which holds no `=`."""
    spans = [span for span in _assignments(filename) if span[0] <= line <= span[1]]
    if spans:
        return min(spans, key=lambda span: span[1] - span[0])[2]  # the innermost statement
    text = linecache.getline(filename, line)  # no parsable source: the line alone
    match = re.match(r"\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)", text)
    return match.group(1) if match else None


@functools.lru_cache(maxsize=32)
def _assignments(filename: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, name) of each single-name assignment in the file's source."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target: ast.expr = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        else:
            continue
        name = _target_name(target)
        if name is not None:
            found.append((node.lineno, node.end_lineno or node.lineno, name))
    return tuple(found)


def _target_name(target: ast.expr) -> str | None:
    """`name` for `name = ...` and `self.name = ...`; None for anything else (tuples, items)."""
    if isinstance(target, ast.Name):
        return target.id
    if (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    ):
        return target.attr
    return None


def base_name(dataset: Any, site: CallSite) -> str:
    """The dataset's class and what tells this loader apart: the variable, else the method that
    made it, else the call site."""
    # A framework's method that says what for (get_eval_dataloader) beats its local variable.
    said = site.role if site.role and re.search(SAYS_WHAT_FOR, site.role.lower()) else None
    hint = said or site.variable or site.role or site.where
    kind = type(dataset).__name__
    return f"{kind}-{hint}" if hint else kind


def evaluation_hint(site_text: str | None) -> bool:
    """A name that says evaluation (val_loader, get_eval_dataloader, test_dataloader)."""
    words = re.split(r"[^a-z]+", (site_text or "").lower())
    return any(w.startswith(EVALUATION_WORDS) for w in words if w)
