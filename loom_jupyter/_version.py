"""The package version (read by hatch)."""

__version__ = "0.1.0"
