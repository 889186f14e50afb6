"""Where the memory lives and how it is read and written.

One JSON file per key, `<digest>.json`, beside a `<digest>.lock`. A write goes to a temporary file
in the same folder, is fsynced, then os.replace()d over the entry: a reader sees the old entry or
the new one, never half of one, and a write cut by a kill or a full disk leaves the old entry. A
read-modify-write holds an fcntl lock on the key's lock file, so that concurrent jobs (and ranks)
of one workload count their runs and keep their measurements without losing each other's
updates; keys do not contend. One file per key (not one database) keeps a corrupted or foreign
entry a warning for its own key alone, lets `autotune memory clear` be a file deletion, and needs
nothing on a shared filesystem beyond what fcntl locks and rename already need.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from pydantic import ValidationError

from autotune.errors import first_error
from autotune.memory import OFF
from autotune.memory.key import digest
from autotune.memory.record import MEMORY_VERSION, Entry
from autotune.run_paths import cache_root

try:  # POSIX; elsewhere a write is still atomic (os.replace), concurrent updates race
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("autotune")
ENV_VAR = "AUTOTUNE_MEMORY"  # a folder, or `off`
FOLDER = "memory"


def where(
    option: Path | bool | None = None, environ: Mapping[str, str] | None = None
) -> Path | None:
    """The memory's folder, or None where it is off: the option (a folder, or False), else
    $AUTOTUNE_MEMORY (a folder, or `off`), else the user's cache (run_paths.cache_root)."""
    if option is False:
        return None
    if isinstance(option, (str, Path)) and not isinstance(option, bool):
        return Path(option).expanduser()
    env = os.environ if environ is None else environ
    value = env.get(ENV_VAR, "").strip()
    if value.lower() in OFF:
        return None
    return Path(value).expanduser() if value else cache_root() / FOLDER


def path_of(folder: Path, key: dict[str, Any]) -> Path:
    return folder / f"{digest(key)}.json"


def read(path: Path, key: dict[str, Any] | None = None) -> Entry | None:
    """The entry in `path`; None where there is none. A file that is not an entry of this
    version, or of another key, is one warning, and is replaced at the next write."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning(
            "autotune: cannot read its memory %s (%s); tuning without it", path, exc.strerror or exc
        )
        return None
    why = None
    try:
        data = json.loads(text)
        version = data.get("autotune_memory") if isinstance(data, dict) else None
        if version != MEMORY_VERSION:
            why = f"not a version-{MEMORY_VERSION} memory entry (autotune_memory: {version!r})"
        else:
            entry = Entry.model_validate(data)
            if key is not None and json.dumps(entry.key, sort_keys=True, default=str) != json.dumps(
                key, sort_keys=True, default=str
            ):
                why = "an entry of another workload or machine under this name"
            else:
                return entry
    except json.JSONDecodeError as exc:
        why = f"not JSON ({exc.msg} at line {exc.lineno})"
    except ValidationError as exc:
        why = first_error(exc, "memory entry")
    log.warning(
        "autotune: ignoring its memory %s: %s; tuning goes on without it (the next run"
        " rewrites it)",
        path,
        why,
    )
    return None


def load(folder: Path, key: dict[str, Any]) -> Entry | None:
    return read(path_of(folder, key), key)


def update(
    folder: Path, key: dict[str, Any], change: Callable[[Entry | None], Entry | None]
) -> Entry | None:
    """Read the key's entry, `change` it and write the result, under the key's lock. Never
    raises: a memory that cannot be written is one warning (the training goes on)."""
    path = path_of(folder, key)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _locked(path.with_suffix(".lock")):
            entry = change(read(path, key))
            if entry is not None:
                _write(path, entry.model_dump_json(indent=1) + "\n")
            return entry
    except OSError as exc:
        log.warning(
            "autotune: cannot write its memory %s (%s); this run is not remembered",
            path,
            exc.strerror or exc,
        )
        return None


@contextmanager
def _locked(lock: Path) -> Iterator[None]:
    with open(lock, "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _write(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def entries(folder: Path) -> list[tuple[Path, Entry | None]]:
    """Every entry file in `folder`, read (None: unreadable, warned)."""
    if not folder.is_dir():
        return []
    return [(p, read(p)) for p in sorted(folder.glob("*.json"))]


def clear(folder: Path) -> int:
    """Delete every entry (and its lock); the number of entries deleted."""
    if not folder.is_dir():
        return 0
    n = 0
    for path in folder.glob("*.json"):
        path.unlink(missing_ok=True)
        path.with_suffix(".lock").unlink(missing_ok=True)
        n += 1
    return n
