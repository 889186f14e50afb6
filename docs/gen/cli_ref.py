"""The CLI reference, generated from the typer app itself, so that a new or renamed option cannot
be missing from the docs. Typer ships its own copy of click, which mkdocs-click does not accept:
the page is written here from the same command objects `--help` reads."""

from __future__ import annotations

from typing import Any

import typer

from autotune.cli.app import app

PROG = "autotune"


def command() -> Any:
    return typer.main.get_command(app)


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _names(param: Any) -> str:
    if param.param_type_name == "argument":
        return f"`{param.name.upper()}`" + ("" if param.required else " (optional)")
    return ", ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))


def _type(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    return _cell(param.display_type(ctx).strip("<>")) + (" (repeatable)" if param.multiple else "")


def _default(param: Any) -> str:
    value = param.default
    if value is None or value in ((), []) or callable(value):
        return ""
    if getattr(param, "is_flag", False) and isinstance(value, bool):
        on, off = param.opts[0], (param.secondary_opts or ["off"])[0]
        return f"`{on}`" if value else (f"`{off}`" if param.secondary_opts else "off")
    return f"`{_cell(value)}`"


def options(sub: Any) -> list[str]:
    """Every option string and argument name a command accepts (the docs test compares them)."""
    return [
        name
        for p in sub.params
        if not p.hidden
        for name in (
            (p.name.upper(),) if p.param_type_name == "argument" else (*p.opts, *p.secondary_opts)
        )
    ]


def command_page(name: str, sub: Any, root_ctx: Any) -> list[str]:
    ctx = sub.context_class(sub, info_name=name, parent=root_ctx)
    usage = " ".join(sub.collect_usage_pieces(ctx))
    if sub.allow_extra_args:  # `autotune run`: the rest of the line is the user's command
        usage += " [--] COMMAND [ARGS]..."
    lines = [
        f"## `{PROG} {name}`",
        "",
        (sub.help or "").strip(),
        "",
        "```text",
        f"{PROG} {name} {usage}",
        "```",
        "",
        "| argument or option | type | default | what it does |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {_names(p)} | {_type(p, ctx)} | {_default(p)} | {_cell(p.help or '')} |"
        for p in sub.params
        if not p.hidden
    ]
    return lines + [""]


def page() -> str:
    root = command()
    root_ctx = root.context_class(root, info_name=PROG)
    lines = [
        "# Command line",
        "",
        "Generated from the typer application (`autotune/cli/app.py`) each time the docs are"
        " built: every argument and option that `autotune COMMAND --help` shows is here.",
        "",
        f"{(root.help or '').strip()}",
        "",
        "Exit codes: 0 on success; 2 on bad input, with one line saying what to fix (`--debug`"
        " shows the Python traceback instead); 130 / 143 when stopped by SIGINT / SIGTERM, after"
        " writing what was measured. `autotune run` exits with its command's own code.",
        "",
    ]
    for name, sub in root.commands.items():
        lines += command_page(name, sub, root_ctx)
    return "\n".join(lines)
