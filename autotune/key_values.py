"""'key=value,...' as the user types it (a workload spec's parameters, --burst's settings): one
parser, so every such option accepts and rejects the same text."""

from __future__ import annotations

from typing import Iterable


def key_values(
    text: str | None, keys: Iterable[str], bad: str, error: type[Exception]
) -> dict[str, str]:
    """Each part's value (stripped) by its key, the last of a repeated key's. A part that is not
    key=value with one of `keys` raises `error`: "`bad` 'part': use key=value with keys ..."."""
    allowed = tuple(keys)
    values: dict[str, str] = {}
    for part in filter(None, (text or "").split(",")):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in allowed:
            raise error(f"{bad} {part!r}: use key=value with keys {', '.join(allowed)}")
        values[key] = value.strip()
    return values
