"""Registrations of the exact_mh family (filled in by its issue)."""

from samplers.specs import MethodSpec, TargetSpec  # noqa: F401

METHODS: list = []
TARGETS: list = []
