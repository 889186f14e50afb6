"""How the reports and notices word a count."""

from __future__ import annotations


def counted(count: int, word: str) -> str:
    """`1 window`, `2 windows`: the count and its noun, singular for one."""
    return f"{count} {word}{'' if count == 1 else 's'}"
