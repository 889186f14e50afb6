"""What a model's source says about each field. autotune documents most fields in comments beside
them (or in a comment over a group of them); pydantic does not see those, so the references read
them from the source."""

from __future__ import annotations

import ast
import inspect
import textwrap

_PRAGMAS = ("type:", "noqa", "pragma")


def _comment(line: str) -> str | None:
    """The comment on a source line, outside string literals (good enough for field lines)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            text = line[i + 1 :].strip()
            return None if text.startswith(_PRAGMAS) else text  # for the type checker, not readers
    return None


def field_comments(cls: type) -> dict[str, str]:
    """field -> its trailing comment, else the comment block over it (a block covers the fields
    under it until one has its own comment or a new block starts)."""
    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    found: dict[str, str] = {}
    block: list[str] = []
    last = body.body[0].lineno - 1 if body.body else 0
    for node in body.body:
        between = [ln.strip() for ln in lines[last : node.lineno - 1]]
        comments = [ln[1:].strip() for ln in between if ln.startswith("#")]
        if comments:
            block = comments
        last = node.end_lineno or node.lineno
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own = _comment(lines[node.end_lineno - 1 if node.end_lineno else node.lineno - 1])
            found[node.target.id] = own or " ".join(block)
            if own:
                block = []
    return {name: text for name, text in found.items() if text}
