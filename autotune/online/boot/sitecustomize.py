"""Run by Python at start-up in every process `autotune run` launches (it puts this folder first on
PYTHONPATH): torch's DataLoader becomes autotune.DataLoader as soon as `import torch` completes.

Waiting for torch keeps a process that never imports it (a shell-out to pip, a compiler worker)
free of torch's import time, and patches after torch's own start-up, never inside it. Kept out of
the autotune package, whose import brings torch in. Another sitecustomize on the path (a
site-wide one) still runs after this one.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

# Processes that only start others: torchrun and torch.distributed.launch, accelerate's and
# DeepSpeed's launchers. Their ranks are patched as they start; patching the launcher itself would
# add autotune's import time before any rank starts, for a DataLoader it never makes.
LAUNCHER_MODULES = (
    "torch.distributed.run",
    "torch.distributed.launch",
    "accelerate.commands.launch",
    "accelerate.commands.accelerate_cli",
    "deepspeed.launcher.runner",
    "deepspeed.launcher.launch",
)
LAUNCHER_COMMANDS = ("torchrun", "accelerate", "deepspeed")


class PatchAfterTorch(importlib.abc.MetaPathFinder):
    """Finds `torch` as the other finders would, and patches once its module has executed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)  # once: torch is imported once per process
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_then_patch(module):
            execute(module)
            _install()

        spec.loader.exec_module = exec_then_patch  # type: ignore[method-assign]  # this spec's only
        return spec


def launcher() -> bool:
    """Whether this process is one of the launchers: run as `python -m LAUNCHER` (torch is
    imported while the module is found, before __main__ is it, so the command line tells), or as
    its command."""
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-X", "-W"):  # the interpreter's options that take a value
            i += 2
            continue
        if arg.startswith("-m"):
            module = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            return module in LAUNCHER_MODULES
        if arg == "-c" or not arg.startswith("-"):
            break  # a command or the script: what follows is theirs
        i += 1
    return bool(sys.argv) and os.path.basename(sys.argv[0]) in LAUNCHER_COMMANDS


def _install() -> None:
    """Patch torch's DataLoader; where autotune itself cannot be imported or patch (a broken
    install, a missing dependency), say so in one line and leave the script torch's own loader:
    autotune's failure must not end the training."""
    if launcher():
        return
    try:
        from autotune.online.patch import install

        install()
    except Exception as exc:  # noqa: BLE001 - whatever it is, the script runs on
        print(
            f"autotune run: torch's DataLoader is not tuned in this process ({type(exc).__name__}:"
            f" {exc}); the script runs with torch's own",
            file=sys.stderr,
        )


def _chain() -> None:
    """The sitecustomize this one shadows, if any, run as Python would have run it."""
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if "torch" in sys.modules:  # imported already (e.g. by a .pth file): patch now
    _install()
else:
    sys.meta_path.insert(0, PatchAfterTorch())
_chain()
