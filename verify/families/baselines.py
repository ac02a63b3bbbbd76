"""Checks of the baselines family (registered in CHECKS; see verify/checks.py)."""

from verify.checks import Check  # noqa: F401

CHECKS: list = []
