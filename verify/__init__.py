"""Verification: exact transition matrices, kernel-vs-matrix tests, bound checks, theory and claims tables.

Imports :mod:`samplers` only. Families register checks in ``verify/families/<family>.py``.
"""
