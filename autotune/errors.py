"""Errors a user can fix. The CLI prints them as one line and exits with code 2."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class AutotuneError(Exception):
    """Base for problems caused by input the user controls (workload spec, recipe, options).

    `detail` is text the user needs beyond the one line, e.g. the traceback of their own code
    when their workload fails in every configuration; the CLI prints it under the line."""

    def __init__(self, message: str, detail: str | None = None):
        super().__init__(message)
        self.detail = detail


class WorkloadError(AutotuneError):
    """The workload spec or the Workload it produced is unusable."""


class RecipeError(AutotuneError):
    """A recipe file is missing, not JSON, of another version, or has invalid fields."""


class OptionsError(AutotuneError):
    """A tuning option (device, budget, results directory, ...) cannot be honoured."""


def json_object(text: str, where: str, error: type[AutotuneError], what: str) -> dict[str, Any]:
    """`text` as a JSON object, else `error` in one line naming `where` (a file, a variable)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where} is not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise error(f"{where} is not {what}: expected a JSON object")
    return data


def first_error(exc: ValidationError, whole: str) -> str:
    """A model's first validation error in one line: where ('a.b', or `whole`) and what."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or whole
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {err['msg'].removeprefix('Value error, ')}{more}"
