"""The version: the one place it is written (pyproject.toml reads it from this file's text)."""

__version__ = "0.1.0"
