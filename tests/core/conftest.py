"""Fixtures of the core tests: ``prefix`` (a managed policy where production reads it)."""

from policy_files import prefix

__all__ = ["prefix"]
