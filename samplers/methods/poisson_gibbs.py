"""Registrations of the poisson_gibbs family (filled in by its issue)."""

from samplers.specs import MethodSpec, TargetSpec  # noqa: F401

METHODS: list = []
TARGETS: list = []
