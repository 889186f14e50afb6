"""Errors a user can fix. The CLI prints them as one line and exits with code 2."""

from __future__ import annotations


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
