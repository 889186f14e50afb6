"""Errors a user can fix. The CLI prints them as one line and exits with code 2."""


class AutotuneError(Exception):
    """Base for problems caused by input the user controls (workload spec, recipe, options)."""


class WorkloadError(AutotuneError):
    """The workload spec or the Workload it produced is unusable."""


class RecipeError(AutotuneError):
    """A recipe file is missing, not JSON, of another version, or has invalid fields."""


class OptionsError(AutotuneError):
    """A tuning option (device, budget, results directory, ...) cannot be honoured."""
